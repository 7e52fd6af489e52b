// Scale benchmark (issue 29): the same measurements on two warehouses, side by side:
//   empty    a fresh warehouse, then one simulator backfill;
//   at size  a warehouse filled with --rows of synthetic history by SQL (bench/lib/synthetic-history.ts,
//            a year before the simulator's range), then the same simulator backfill.
// Measured on each: ingest rows/s of the backfill (runCheckinsPass, in this process), `status --json`
// (collectStatus + JSON), the status page (collectStatus + renderStatusPage), /metrics' figures
// (collectGaugeFigures), one `verify` window (the API probe, the window count and the rollup check of
// its day), and a 30-day check_ins_daily query. Each query figure is the median of 7 runs after one
// warm-up. Ratios are at size ÷ empty. Writes .bench/scale.json.
//
//   node --import tsx bench/scale.ts [--rows N] [--full] [--check-ins N]
//   node --import tsx bench/scale.ts --migration-rows N   (only: time migrations 0008 + 0009 at N rows)
//   (defaults: --rows 5000000; --full: 20000000; `npm run bench` passes a smaller --rows)

import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { loadConfig, type Config } from '../src/config/config.js';
import { secretValues } from '../src/config/secret-values.js';
import { renderStatusPage } from '../src/http/status-page.js';
import { createLogger } from '../src/log.js';
import { createPipelineRuntime } from '../src/runtime/pipeline.js';
import { collectGaugeFigures, collectStatus } from '../src/status/collect-status.js';
import { thresholdsFor } from '../src/status/verdict.js';
import { runCheckinsPass } from '../src/streams/checkins/pass.js';
import { probeWindow } from '../src/streams/checkins/window-check.js';
import { monthStart } from '../src/sync/retention.js';
import { compareRollupWithRows } from '../src/warehouse/check-ins-daily.js';
import { windowsInRange } from '../src/warehouse/sync-window-reads.js';
import { createBenchDatabase, type BenchDatabase } from './lib/bench-database.js';
import { timePartitionMigration } from './lib/migration-time.js';
import { atMost, formatTable, writeJson, type Figure } from './lib/report.js';
import { startSimulatorProcess } from './lib/simulator-process.js';
import { fillSyntheticCheckIns } from './lib/synthetic-history.js';

const DAY_MS = 86_400_000;
const SIM_DAYS = 7;
const HISTORY_DAYS = 365;
const RUNS = 7;
const RESULTS_PATH = '.bench/scale.json';

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string' },
    full: { type: 'boolean', default: false },
    'check-ins': { type: 'string' },
    /** Only time migrations 0008 and 0009 on an install of this many rows (BENCHMARKS.md). */
    'migration-rows': { type: 'string' },
  },
});
const rows = args.full ? 20_000_000 : Number(args.rows ?? 5_000_000);
const checkIns = Number(args['check-ins'] ?? 50_000);
if (!Number.isInteger(rows) || rows <= 0) throw new Error('--rows must be a positive whole number');
if (!Number.isInteger(checkIns) || checkIns <= 0)
  throw new Error('--check-ins must be a positive whole number');

const progress = (text: string) => process.stderr.write(`[bench scale] ${text}\n`);

async function median(run: () => Promise<unknown>): Promise<number> {
  await run();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(RUNS / 2)]!;
}

interface Measured {
  ingestRowsPerSecond: number;
  statusMs: number;
  statusPageMs: number;
  metricsMs: number;
  verifyWindowMs: number;
  dailyQuery30dMs: number;
}

async function measure(
  label: string,
  warehouse: BenchDatabase,
  env: NodeJS.ProcessEnv,
  before: (config: Config) => Promise<void>,
): Promise<Measured> {
  const config = loadConfig({ ...env, DATABASE_URL: warehouse.url });
  await before(config);
  const logger = createLogger({ level: 'warn', secrets: secretValues(config), pretty: false });
  const runtime = createPipelineRuntime({ config, logger, applicationName: 'rewards-etl-bench-scale' });
  try {
    progress(`${label}: simulator backfill of ${checkIns.toLocaleString('en')} check-ins`);
    const started = performance.now();
    const outcome = await runCheckinsPass(runtime.deps);
    const ingestMs = performance.now() - started;
    if (outcome.status !== 'succeeded') throw new Error(`backfill ${outcome.status}: ${outcome.error ?? ''}`);
    const ingestRowsPerSecond = outcome.rows / (ingestMs / 1000);
    await sql`analyze`.execute(warehouse.db);

    const sources = { db: runtime.deps.db, redis: runtime.redis, config, clock: runtime.deps.clock };
    const thresholds = thresholdsFor(config);
    progress(`${label}: status, status page, /metrics, verify window, daily query (${RUNS} runs each)`);
    const statusMs = await median(async () => JSON.stringify(await collectStatus(sources)));
    const statusPageMs = await median(async () => renderStatusPage(await collectStatus(sources), thresholds));
    const metricsMs = await median(() => collectGaugeFigures(sources));
    const windows = await windowsInRange(runtime.deps.db, {}, ['complete']);
    const window = windows[Math.floor(windows.length / 2)];
    if (window === undefined) throw new Error('no complete window to verify');
    const day = window.window_start.toISOString().slice(0, 10);
    const next = new Date(Date.parse(day) + DAY_MS).toISOString().slice(0, 10);
    const verifyWindowMs = await median(async () => {
      await probeWindow(runtime.deps, window);
      await compareRollupWithRows(runtime.deps.db, day, next);
    });
    const dailyQuery30dMs = await median(() =>
      sql`select day, restaurant_id, sum(check_ins) as check_ins, sum(svc_pay_check_ins) as pay,
                 avg(median_visit_minutes) as median
          from rewards.check_ins_daily where day >= current_date - 30 group by 1, 2`.execute(runtime.deps.db),
    );
    return { ingestRowsPerSecond, statusMs, statusPageMs, metricsMs, verifyWindowMs, dailyQuery30dMs };
  } finally {
    await runtime.close();
  }
}

async function main(): Promise<void> {
  const base = loadConfig(process.env);
  if (args['migration-rows'] !== undefined) {
    const migrationRows = Number(args['migration-rows']);
    const result = await timePartitionMigration(base.databaseUrl.reveal(), migrationRows, progress);
    process.stdout.write(
      `\nMigration of check_ins at ${migrationRows.toLocaleString('en')} rows (${result.applied.join(', ')}): ${result.seconds.toFixed(1)} s\n`,
    );
    await writeJson('.bench/scale-migration.json', { rows: migrationRows, seconds: result.seconds });
    return;
  }
  const anchorMs = Math.floor((Date.now() - 10 * 60_000) / 60_000) * 60_000;
  const simStartMs = anchorMs - SIM_DAYS * DAY_MS;
  progress(`simulator: ${checkIns.toLocaleString('en')} check-ins over ${SIM_DAYS} days, in a child process`);
  const sim = await startSimulatorProcess({ seed: 29, checkIns, anchorMs, days: SIM_DAYS }, process.env);
  const databases: BenchDatabase[] = [];
  try {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      REDIS_URL: base.redisUrl.reveal(),
      REDIS_PREFIX: `bench-scale-${randomBytes(4).toString('hex')}`,
      SVC_API_BASE_URL: sim.baseUrl,
      SVC_API_KEY: sim.apiKey,
      SVC_RATE_LIMIT_RPS: '1000000',
      SVC_PAGE_SIZE: '500',
      CHECKINS_START_AT: new Date(simStartMs).toISOString(),
      CHECKINS_WINDOW: '1h',
      LOG_LEVEL: 'warn',
    };
    const empty = await createBenchDatabase(base.databaseUrl.reveal(), 'scale_empty');
    databases.push(empty);
    const atEmpty = await measure('empty', empty, env, () => Promise.resolve());

    const sized = await createBenchDatabase(base.databaseUrl.reveal(), 'scale_sized');
    databases.push(sized);
    let fillMs = 0;
    const atSize = await measure('at size', sized, env, async () => {
      // A year of history in the months before the simulator's (no partition exists there yet).
      const endBefore = new Date(monthStart(simStartMs));
      progress(
        `at size: filling ${rows.toLocaleString('en')} rows of history by SQL, ${HISTORY_DAYS} days before ${endBefore.toISOString()}`,
      );
      const started = performance.now();
      await fillSyntheticCheckIns(sized.db, { rows, endBefore, days: HISTORY_DAYS }, (month, n) =>
        progress(`  ${month}: ${n.toLocaleString('en')} rows`),
      );
      fillMs = performance.now() - started;
    });

    const { rows: size } = await sql<{ n: string }>`select count(*) as n from rewards.check_ins`.execute(
      sized.db,
    );
    const warehouseRows = Number(size[0]?.n ?? 0);
    const ratio = (key: keyof Measured) => atSize[key] / atEmpty[key];
    const ms = (value: number) => `${value.toFixed(1)} ms`;
    const row = (name: string, key: keyof Measured, goal: string, verdict: Figure['verdict']): Figure => ({
      name,
      measured:
        key === 'ingestRowsPerSecond'
          ? `${Math.round(atEmpty[key]).toLocaleString('en')} → ${Math.round(atSize[key]).toLocaleString('en')} rows/s (${ratio(key).toFixed(2)}×)`
          : `${ms(atEmpty[key])} → ${ms(atSize[key])} (${ratio(key).toFixed(2)}×)`,
      goal,
      verdict,
    });
    const full = rows >= 20_000_000 ? '' : ' (goal is for 20 M)';
    const figures: Figure[] = [
      row(
        'Ingest, one simulator backfill',
        'ingestRowsPerSecond',
        `≥ 0.9× empty${full}`,
        ratio('ingestRowsPerSecond') >= 0.9 ? 'PASS' : 'MISS',
      ),
      row(
        'status --json (collect + JSON)',
        'statusMs',
        `≤ 1.2× empty${full}`,
        atMost(ratio('statusMs'), 1.2),
      ),
      row(
        'Status page (collect + render)',
        'statusPageMs',
        `≤ 1.2× empty${full}`,
        atMost(ratio('statusPageMs'), 1.2),
      ),
      row('/metrics figures', 'metricsMs', '—', 'info'),
      row('verify, one window (+ rollup check)', 'verifyWindowMs', '—', 'info'),
      row(
        '30-day check_ins_daily query',
        'dailyQuery30dMs',
        `≤ 50 ms at size${full}`,
        atMost(atSize.dailyQuery30dMs, 50),
      ),
    ];
    process.stdout.write(
      `\nScale: empty vs ${warehouseRows.toLocaleString('en')} check-ins (history filled in ${(fillMs / 1000).toFixed(0)} s)\n\n${formatTable(figures)}\n`,
    );
    await writeJson(RESULTS_PATH, {
      rows: warehouseRows,
      historyRows: rows,
      simulatorRows: checkIns,
      statusRatio: ratio('statusMs'),
      statusPageRatio: ratio('statusPageMs'),
      metricsRatio: ratio('metricsMs'),
      verifyWindowRatio: ratio('verifyWindowMs'),
      dailyQuery30dMs: atSize.dailyQuery30dMs,
      ingestRatio: ratio('ingestRowsPerSecond'),
      fillSeconds: fillMs / 1000,
      empty: atEmpty,
      atSize,
    });
    progress(`wrote ${RESULTS_PATH}`);
  } finally {
    await Promise.all(databases.map((database) => database.drop().catch(() => undefined)));
    await sim.close();
  }
}

await main();
