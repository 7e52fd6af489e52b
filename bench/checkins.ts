// Check-in ingestion benchmark. One run measures, side by side:
//   1. rows/s of a full backfill (runCheckinsPass from an empty warehouse);
//   2. the pipeline's time ÷ a bare fetch loop's (HTTP + JSON.parse) over the same windows;
//   3. the writer's time (commitCheckInPage, page by page) ÷ one COPY of the same rows;
//   4. the built pipeline process's peak RSS, its Postgres statements per window and its CPU;
//   5. the look-back's requests per hour at a steady feed, and their share of a 10 rps budget;
//   6. a busy venue (one location, 20,000 check-ins a day): µs per row of its last page ÷ its first.
// The simulator runs in a child process and the backfill in another, so neither's CPU or
// memory is charged to the other; phases run one after another, never concurrently. Postgres is
// the bench's own throw-away cluster (bench/lib/bench-postgres.ts), so its CPU per phase is all
// of Postgres's and nobody else's; each phase also reports pg_stat_statements' buffer counters.
//
//   node --import tsx bench/checkins.ts [--check-ins N] [--full] [--cpu-prof] [--promoted-profile] [--backfill-only] [--busy-venue-only]
//     [--worker-flags='<V8 flags for the backfill child>']   (default: the shipped heap policy;
//     --worker-flags= runs it on V8's defaults)

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { fixedClock } from '../src/clock.js';
import { loadConfig, type Config } from '../src/config/config.js';
import { secretValues } from '../src/config/secret-values.js';
import { createLogger } from '../src/log.js';
import { WORKER_NODE_OPTIONS } from '../src/runtime/heap-policy.js';
import { createPipelineRuntime } from '../src/runtime/pipeline.js';
import { planWindows, type Window } from '../src/sync/windows.js';
import { windowOf, windowsInRange } from '../src/warehouse/sync-window-reads.js';
import { bareFetchWindows, type BareFetchOptions } from './lib/bare-fetch.js';
import type { BareFetchChildResult } from './lib/bare-fetch-child.js';
import type { BackfillResult } from './lib/backfill-child.js';
import { createBenchDatabase, type BenchDatabase } from './lib/bench-database.js';
import { measureLookback } from './lib/lookback-steady.js';
import { startBenchPostgres, type BenchPostgres, type PostgresPhase } from './lib/bench-postgres.js';
import { measureBusyVenue } from './lib/busy-venue.js';
import { atMost, formatTable, mb, seconds, writeJson, type Figure } from './lib/report.js';
import { cpuSeconds, forkRpcChild } from './lib/rpc.js';
import { startSimulatorProcess, type SimulatorProcess } from './lib/simulator-process.js';
import { compareWriterWithCopy } from './lib/writer-vs-copy.js';

const DAYS = 30;
const PAGE_SIZE = 500; // the simulator's page_size maximum (docs/simulator.md)
const NO_RATE_LIMIT_RPS = '1000000';
const BUDGET_RPS = 10;
const HOUR_MS = 3_600_000;
const RESULTS_PATH = '.bench/checkins.json';
const BUSY_VENUE_PER_DAY = 20_000;
const PAIRED_RUNS = 3;

const { values: args } = parseArgs({
  options: {
    'check-ins': { type: 'string' },
    full: { type: 'boolean', default: false },
    'cpu-prof': { type: 'boolean', default: false },
    /** What the pass promotes to V8's old generation, by allocation site (bench/lib/promoted-profile.ts). */
    'promoted-profile': { type: 'boolean', default: false },
    /** Only phases 1 and 2 (three backfill / bare-loop pairs), printed and not written to the results file: for quick trials. */
    'backfill-only': { type: 'boolean', default: false },
    /** Only phase 6 (the busy venue), three times in fresh databases, printed: for quick trials. */
    'busy-venue-only': { type: 'boolean', default: false },
    /** V8 flags for the backfill child only; default: the shipped heap policy (src/runtime/heap-policy.ts). */
    'worker-flags': { type: 'string' },
  },
});
const checkIns = args.full ? 1_000_000 : Number(args['check-ins'] ?? 200_000);
if (!Number.isInteger(checkIns) || checkIns <= 0)
  throw new Error('--check-ins must be a positive whole number');

// The backfill child starts as a shipped worker does (Dockerfile, systemd unit, npm start).
const workerFlags = args['worker-flags'] ?? WORKER_NODE_OPTIONS;

const progress = (text: string) => process.stderr.write(`[bench checkins] ${text}\n`);

async function usageDelta<T>(sim: SimulatorProcess, postgres: BenchPostgres, run: () => Promise<T>) {
  const simBefore = await sim.call('usage', null);
  const { value, postgres: phase } = await postgres.phase(run);
  const simAfter = await sim.call('usage', null);
  return {
    value,
    simulatorCpuSeconds: simAfter.cpuSeconds - simBefore.cpuSeconds,
    postgresCpuSeconds: phase.cpuSeconds,
    postgres: phase,
    simulatorRssBytes: simAfter.maxRssBytes,
  };
}

/**
 * The backfill runs from the build (`dist/`, compiled here first) on plain node, as a deployed
 * worker does, so its memory is the service's and not the tsx loader's.
 */
async function buildDist(): Promise<{ backfill: string; bareFetch: string }> {
  const root = fileURLToPath(new URL('../', import.meta.url));
  const exitCode = await new Promise<number | null>((resolve) => {
    const tsc = spawn(
      process.execPath,
      [`${root}node_modules/typescript/bin/tsc`, '-p', 'tsconfig.build.json'],
      {
        cwd: root,
        stdio: 'inherit',
      },
    );
    tsc.once('exit', resolve);
  });
  if (exitCode !== 0) throw new Error(`tsc -p tsconfig.build.json failed (exit ${exitCode})`);
  return {
    backfill: `${root}dist/bench/lib/backfill-child.js`,
    bareFetch: `${root}dist/bench/lib/bare-fetch-child.js`,
  };
}

/** With --cpu-prof, each child writes a .cpuprofile (named by its pid) into .bench/profiles. */
function cpuProfileFlags(): string[] {
  return args['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', '.bench/profiles'] : [];
}

/** The V8 flags of a child given as one string (the heap policy's form). */
function flagList(flags: string): string[] {
  return flags.split(' ').filter((flag) => flag !== '');
}

/** One bare fetch loop in a fresh compiled child with `flags` (bench/lib/bare-fetch-child.ts). */
async function runBareFetchChild(
  script: string,
  flags: string,
  options: BareFetchOptions,
  sim: SimulatorProcess,
  postgres: BenchPostgres,
) {
  const { child } = await forkRpcChild<
    {
      fetch: (arg: BareFetchOptions) => Promise<BareFetchChildResult>;
      close: (arg: null) => Promise<void>;
    },
    unknown
  >(script, { env: process.env, execArgv: [...cpuProfileFlags(), ...flagList(flags)] });
  try {
    return await usageDelta(sim, postgres, () => child.call('fetch', options));
  } finally {
    await child.call('close', null).catch(() => undefined);
    await child.exited;
  }
}

async function runBackfillChild(
  env: NodeJS.ProcessEnv,
  sim: SimulatorProcess,
  postgres: BenchPostgres,
  script: string,
) {
  const execArgv = [...cpuProfileFlags(), ...flagList(workerFlags)];
  const { child } = await forkRpcChild<
    { backfill: (arg: null) => Promise<BackfillResult>; close: (arg: null) => Promise<void> },
    unknown
  >(script, {
    env: args['promoted-profile'] ? { ...env, BENCH_PROMOTED_PROFILE_DIR: '.bench/profiles' } : env,
    execArgv,
  });
  try {
    return await usageDelta(sim, postgres, () => child.call('backfill', null));
  } finally {
    await child.call('close', null).catch(() => undefined);
    await child.exited;
    await sleep(1000); // let its backends exit before the next phase
  }
}

type BackfillRun = Awaited<ReturnType<typeof runBackfillChild>>;
type BareRun = Awaited<ReturnType<typeof runBareFetchChild>>;

/**
 * Phases 1 and 2, alternated PAIRED_RUNS times: a full backfill from empty (each into a fresh
 * database and Redis prefix) in a pipeline child, then the bare loop over the same windows in a
 * child with the same flags. This machine's speed drifts by a third within minutes, so a ratio
 * is taken within a pair, run back to back, and the pair with the median CPU ratio is the one
 * reported. The first run's warehouse is kept for the look-back phase; the others are dropped.
 */
async function backfillsAgainstBare(context: {
  env: NodeJS.ProcessEnv;
  sim: SimulatorProcess;
  postgres: BenchPostgres;
  scripts: { backfill: string; bareFetch: string };
  fetchOptions: Omit<BareFetchOptions, 'windows'>;
  databases: BenchDatabase[];
}) {
  const { sim, postgres, scripts } = context;
  const pairs: { backfill: BackfillRun; bare: BareRun; warehouseRows: number }[] = [];
  let kept: { warehouse: BenchDatabase; env: NodeJS.ProcessEnv; windows: Window[] } | null = null;
  for (let run = 1; run <= PAIRED_RUNS; run++) {
    const database = await createBenchDatabase(postgres.url, `checkins${run}`);
    context.databases.push(database);
    const env = {
      ...context.env,
      DATABASE_URL: database.url,
      REDIS_PREFIX: `bench-checkins-${randomBytes(4).toString('hex')}`,
    };
    const backfill = await runBackfillChild(env, sim, postgres, scripts.backfill);
    const counted = await database.db
      .selectFrom('rewards.check_ins')
      .select((eb) => eb.fn.countAll<string>().as('rows'))
      .executeTakeFirstOrThrow();
    const warehouseRows = Number(counted.rows);
    if (backfill.value.status !== 'succeeded' || warehouseRows !== checkIns) {
      throw new Error(
        `backfill ${run} ${backfill.value.status}: ${warehouseRows} rows in the warehouse, ${checkIns} generated`,
      );
    }
    kept ??= {
      warehouse: database,
      env,
      windows: (await windowsInRange(database.db, {}, ['complete'])).map(windowOf),
    };
    if (database !== kept.warehouse) {
      await database.drop();
      context.databases.splice(context.databases.indexOf(database), 1);
    }
    const bare = await runBareFetchChild(
      scripts.bareFetch,
      workerFlags,
      { ...context.fetchOptions, windows: kept.windows },
      sim,
      postgres,
    );
    pairs.push({ backfill, bare, warehouseRows });
    progress(
      `  pair ${run}: backfill ${seconds(backfill.value.elapsedMs)} / ${backfill.value.cpuSeconds.toFixed(1)} CPU-s, bare ${seconds(bare.value.elapsedMs)} / ${bare.value.cpuSeconds.toFixed(1)} CPU-s`,
    );
  }
  const cpuRatio = (pair: (typeof pairs)[number]) =>
    pair.backfill.value.cpuSeconds / pair.bare.value.cpuSeconds;
  const median = [...pairs].sort((x, y) => cpuRatio(x) - cpuRatio(y))[Math.floor(pairs.length / 2)]!;
  const { env, windows } = kept!;
  return { pairs, median, env, windows, bareOptions: { ...context.fetchOptions, windows } };
}

async function main(): Promise<void> {
  const base: Config = loadConfig(process.env);
  const anchorMs = Math.floor((Date.now() - 10 * 60_000) / 60_000) * 60_000;
  const startAtMs = anchorMs - DAYS * 86_400_000;
  progress(
    `generating ${checkIns.toLocaleString('en')} check-ins over ${DAYS} days in a simulator child process`,
  );
  const sim = await startSimulatorProcess({ seed: 42, checkIns, anchorMs, days: DAYS }, process.env);
  progress('starting a throw-away PostgreSQL cluster (pg_stat_statements loaded)');
  const postgres = await startBenchPostgres();
  const databases: BenchDatabase[] = [];
  const csvPath = `/tmp/rewards-etl-bench-${randomBytes(4).toString('hex')}.csv`;
  let closeRuntime: (() => Promise<void>) | undefined;
  try {
    // DATABASE_URL and REDIS_PREFIX are set per backfill run (backfillsAgainstBare).
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      REDIS_URL: base.redisUrl.reveal(),
      SVC_API_BASE_URL: sim.baseUrl,
      SVC_API_KEY: sim.apiKey,
      SVC_RATE_LIMIT_RPS: NO_RATE_LIMIT_RPS,
      SVC_PAGE_SIZE: String(PAGE_SIZE),
      CHECKINS_START_AT: new Date(startAtMs).toISOString(),
      CHECKINS_WINDOW: '1h',
      CHECKINS_LOOKBACK: '24h',
      CHECKINS_LOOKBACK_EVERY: '15m',
      CHECKINS_EVERY: '1m',
      LOG_LEVEL: 'warn',
    };
    const fetchOptions = {
      baseUrl: sim.baseUrl,
      apiKey: sim.apiKey,
      userAgent: base.api.userAgent,
      pageSize: PAGE_SIZE,
    };

    progress('warming up the simulator (one day of pages, not timed)');
    await bareFetchWindows({
      ...fetchOptions,
      windows: planWindows(anchorMs - 86_400_000, anchorMs, HOUR_MS),
    });

    progress('building dist/ (the backfill child runs compiled, on plain node)');
    const scripts = await buildDist();
    progress(
      `1-2/5 backfill (runCheckinsPass from empty, in a pipeline child) and bare loop (a child with its flags), alternated ${PAIRED_RUNS} times`,
    );
    const paired = await backfillsAgainstBare({ env, sim, postgres, scripts, fetchOptions, databases });
    const { windows, bareOptions } = paired;
    // The writer and look-back phases run in this process on the first run's warehouse.
    const config = loadConfig(paired.env);
    if (args['backfill-only']) {
      for (const { backfill, bare } of paired.pairs) {
        const b = backfill.value;
        process.stdout.write(
          `backfill: ${seconds(b.elapsedMs)}, own CPU ${b.cpuSeconds.toFixed(1)} s, ${b.systemCpuSeconds.toFixed(1)} in the kernel (bare loop after it: ${bare.value.cpuSeconds.toFixed(1)} s, ${bare.value.systemCpuSeconds.toFixed(1)} in the kernel; ${(b.cpuSeconds / bare.value.cpuSeconds).toFixed(2)}×), postgres ${backfill.postgresCpuSeconds.toFixed(1)} s; ` +
            `RSS baseline ${mb(b.baselineRssBytes)}, peak ${mb(b.peakRssBytes)}, heap peak ${mb(b.heapUsedPeakBytes)}; ` +
            `${b.io.postgresQueries} queries, ${b.io.redisCommands} Redis commands; flags [${workerFlags}]\n`,
        );
      }
      return;
    }
    const { backfill, bare, warehouseRows } = paired.median;
    // The goal is a ceiling: the highest peak of the runs is the one reported.
    const peakRssBytes = Math.max(...paired.pairs.map((pair) => pair.backfill.value.peakRssBytes));
    const bareCpuSeconds = bare.value.cpuSeconds;
    // For reference: the same loop in this process (tsx, V8's defaults: how it was measured before
    // session 9), and on node:http instead of the undici package (what undici buys the transport).
    const inProcessCpuBefore = cpuSeconds();
    const inProcess = await bareFetchWindows(bareOptions);
    const inProcessCpuSeconds = cpuSeconds() - inProcessCpuBefore;
    const nodeHttp = (
      await runBareFetchChild(
        scripts.bareFetch,
        workerFlags,
        { ...bareOptions, client: 'node:http' },
        sim,
        postgres,
      )
    ).value;

    progress('3/5 writer (commitCheckInPage per page) vs COPY, into a fresh database');
    const writerDb = await createBenchDatabase(postgres.url, 'writer');
    databases.push(writerDb);
    const logger = createLogger({ level: 'warn', secrets: secretValues(config), pretty: false });
    const clock = fixedClock(new Date(Math.floor(Date.now() / 1000) * 1000));
    const runtime = createPipelineRuntime({ config, logger, clock, applicationName: 'rewards-etl-bench' });
    closeRuntime = () => runtime.close();
    let phaseStarted = performance.now();
    const writer = await compareWriterWithCopy({
      api: runtime.deps.api,
      db: writerDb.db,
      windows,
      pageSize: PAGE_SIZE,
      csvPath,
      phase: (work) => postgres.phase(work),
    });

    const phaseMs = { writer: performance.now() - phaseStarted, lookback: 0 };
    phaseStarted = performance.now();
    progress('4/5 look-back at a steady feed (simulated time: 1 h warm-up, 3 h measured)');
    const lookback = await measureLookback({
      deps: runtime.deps,
      clock,
      sim,
      startMs: clock.now().getTime(),
      warmupMs: HOUR_MS,
      measuredMs: 3 * HOUR_MS,
      budgetRps: BUDGET_RPS,
    });
    phaseMs.lookback = performance.now() - phaseStarted;

    progress(`5/5 busy venue: one location, ${BUSY_VENUE_PER_DAY.toLocaleString('en')} check-ins in a day`);
    const busyDb = await createBenchDatabase(postgres.url, 'busy');
    databases.push(busyDb);
    const busy = await postgres.phase(() =>
      measureBusyVenue({
        url: busyDb.url,
        perDay: BUSY_VENUE_PER_DAY,
        pageSize: PAGE_SIZE,
        day: new Date(anchorMs - 2 * 86_400_000),
      }),
    );

    const b = backfill.value;
    const rowsPerSecond = warehouseRows / (b.elapsedMs / 1000);
    const pipelineVsBare = b.elapsedMs / bare.value.elapsedMs;
    const writerVsCopy = writer.writerMs / writer.copyMs;
    const rssGoal = 150 * 1_048_576;
    const rssNote = checkIns === 1_000_000 ? '' : ' (goal is for 1,000,000)';
    const statementsPerWindow = b.io.postgresQueries / windows.length;
    const cpuRatio = b.cpuSeconds / bareCpuSeconds;
    const copyCpuSeconds = writer.copyPostgres?.cpuSeconds ?? Number.NaN;
    const machineCpuRatio = (b.cpuSeconds + backfill.postgresCpuSeconds) / (bareCpuSeconds + copyCpuSeconds);
    const figures: Figure[] = [
      {
        name: 'Backfill rows/s, end to end',
        measured: `${Math.round(rowsPerSecond).toLocaleString('en')} rows/s`,
        goal: `— (${warehouseRows.toLocaleString('en')} rows in ${seconds(b.elapsedMs)})`,
        verdict: 'info',
      },
      {
        name: 'Pipeline ÷ bare fetch loop',
        measured: `${pipelineVsBare.toFixed(2)}×`,
        goal: `≤ 1.5 (bare: ${seconds(bare.value.elapsedMs)})`,
        verdict: atMost(pipelineVsBare, 1.5),
      },
      {
        name: 'Writer ÷ COPY',
        measured: `${writerVsCopy.toFixed(2)}×`,
        goal: `≤ 1.5 (${seconds(writer.writerMs)} vs ${seconds(writer.copyMs)})`,
        verdict: atMost(writerVsCopy, 1.5),
      },
      {
        name: 'Postgres statements per window',
        measured: statementsPerWindow.toFixed(1),
        goal: `≤ 6 (${b.io.postgresQueries.toLocaleString('en')} for ${windows.length} windows)`,
        verdict: atMost(statementsPerWindow, 6),
      },
      {
        name: "Pipeline's CPU ÷ bare loop's CPU",
        measured: `${cpuRatio.toFixed(2)}×`,
        goal: `≤ 1.4 (${b.cpuSeconds.toFixed(1)} s vs ${bareCpuSeconds.toFixed(1)} s)`,
        verdict: atMost(cpuRatio, 1.4),
      },
      {
        name: '(Pipeline + Postgres CPU) ÷ (bare loop + COPY)',
        measured: `${machineCpuRatio.toFixed(2)}×`,
        goal: `≤ 1.3 (${(b.cpuSeconds + backfill.postgresCpuSeconds).toFixed(1)} s vs ${(bareCpuSeconds + copyCpuSeconds).toFixed(1)} s)`,
        verdict: atMost(machineCpuRatio, 1.3),
      },
      {
        name: 'Busy venue: backend µs/row, last page ÷ first',
        measured: `${busy.value.lastVsFirst.toFixed(2)}×`,
        goal: `≤ 1.2 (${busy.value.lastMicrosPerRow.toFixed(0)} vs ${busy.value.firstMicrosPerRow.toFixed(0)} µs/row, ${busy.value.pages} pages)`,
        verdict: atMost(busy.value.lastVsFirst, 1.2),
      },
      {
        name: 'Peak RSS of the built pipeline (no tsx)',
        measured: mb(peakRssBytes),
        goal: `≤ 150 MB${rssNote}`,
        verdict: atMost(peakRssBytes, rssGoal),
      },
      {
        name: 'Look-back req/h, hours 1–4 after backfill',
        measured: `${lookback.requestsPerHour.toFixed(0)} req/h`,
        goal: `— (${lookback.requestsPerCycle.toFixed(0)} per 15-min cycle, ${percent(lookback.budgetShare)} of ${BUDGET_RPS} rps)`,
        verdict: 'info',
      },
      {
        name: 'Look-back req/h, steady state (projected)',
        measured: `${lookback.steadyState.requestsPerHour.toFixed(0)} req/h`,
        goal: `— (${lookback.steadyState.requestsPerCycle.toFixed(0)} per cycle, ${percent(lookback.steadyState.budgetShare)} of ${BUDGET_RPS} rps)`,
        verdict: 'info',
      },
    ];

    const results = {
      bench: 'checkins',
      at: new Date().toISOString(),
      machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version },
      settings: {
        checkIns,
        days: DAYS,
        pageSize: PAGE_SIZE,
        rateLimitRps: Number(NO_RATE_LIMIT_RPS),
        windowMs: HOUR_MS,
        workerFlags,
      },
      // The median pair's backfill and bare loop (backfillsAgainstBare); peakRssBytes is the
      // highest of all the runs, and `runs` lists each pair.
      backfill: {
        ...b,
        peakRssBytes,
        rowsPerSecond,
        warehouseRows,
        windows: windows.length,
        ...omitValue(backfill),
        runs: paired.pairs.map(({ backfill: run }) => ({
          elapsedMs: run.value.elapsedMs,
          cpuSeconds: run.value.cpuSeconds,
          systemCpuSeconds: run.value.systemCpuSeconds,
          postgresCpuSeconds: run.postgresCpuSeconds,
          peakRssBytes: run.value.peakRssBytes,
        })),
      },
      bareFetch: {
        ...bare.value,
        cpuSeconds: bareCpuSeconds,
        ...omitValue(bare),
        flags: workerFlags,
        runs: paired.pairs.map(({ bare: run }) => ({
          elapsedMs: run.value.elapsedMs,
          cpuSeconds: run.value.cpuSeconds,
          systemCpuSeconds: run.value.systemCpuSeconds,
        })),
        inBenchProcess: { ...inProcess, cpuSeconds: inProcessCpuSeconds },
        nodeHttp,
      },
      pipelineVsBare,
      machineCpuRatio,
      writer: {
        ...writer,
        writerVsCopy,
        copyCpuSeconds,
        writerPostgresCpuSeconds: writer.writerPostgres?.cpuSeconds ?? null,
      },
      lookback,
      busyVenue: { ...busy.value, postgres: busy.postgres },
      figures,
    };
    await writeJson(RESULTS_PATH, results);

    const cpu = (
      label: string,
      own: number,
      phase: { simulatorCpuSeconds: number; postgresCpuSeconds: number | null },
    ) =>
      `  ${label}: own ${own.toFixed(1)} s, simulator ${phase.simulatorCpuSeconds.toFixed(1)} s, postgres ${phase.postgresCpuSeconds?.toFixed(1) ?? '?'} s`;
    const buffers = (label: string, phase: PostgresPhase | null) =>
      phase === null
        ? `  ${label}: —`
        : `  ${label}: CPU ${phase.cpuSeconds.toFixed(1)} s, ${phase.calls} statements (${(phase.execMs / 1000).toFixed(1)} s), buffers hit ${phase.sharedBlocksHit.toLocaleString('en')}, read ${phase.sharedBlocksRead.toLocaleString('en')}, dirtied ${phase.sharedBlocksDirtied.toLocaleString('en')}, written ${phase.sharedBlocksWritten.toLocaleString('en')}, WAL ${mb(phase.walBytes)}, JIT ${phase.jitFunctions} functions (${(phase.jitMs / 1000).toFixed(1)} s)`;
    process.stdout.write(
      [
        '',
        `Check-in ingestion, ${checkIns.toLocaleString('en')} check-ins over ${DAYS} days, page_size ${PAGE_SIZE}, no rate limit`,
        `(${cpus().length} cores; simulator and pipeline in separate child processes)`,
        '',
        formatTable(figures),
        '',
        `Requests: pipeline ${b.requests}, bare loop ${bare.value.requests}, over ${windows.length} windows.`,
        'CPU seconds during each timed phase:',
        cpu(`backfill (${seconds(b.elapsedMs)})`, b.cpuSeconds, backfill),
        cpu(`bare fetch (${seconds(bare.value.elapsedMs)})`, bareCpuSeconds, bare),
        `  pairs, run back to back (the pair with the median CPU ratio is compared): ${paired.pairs
          .map(
            (pair) =>
              `backfill ${pair.backfill.value.cpuSeconds.toFixed(1)} (kernel ${pair.backfill.value.systemCpuSeconds.toFixed(1)}) / bare ${pair.bare.value.cpuSeconds.toFixed(1)} (kernel ${pair.bare.value.systemCpuSeconds.toFixed(1)}) CPU-s = ${(pair.backfill.value.cpuSeconds / pair.bare.value.cpuSeconds).toFixed(2)}×`,
          )
          .join(', ')}`,
        `  the same bare loop in the bench's process (tsx, V8's defaults): ${seconds(inProcess.elapsedMs)}, own CPU ${inProcessCpuSeconds.toFixed(1)} s`,
        `  the same bare loop on node:http instead of undici: ${seconds(nodeHttp.elapsedMs)}, own CPU ${nodeHttp.cpuSeconds.toFixed(1)} s`,
        'Postgres per phase (its own cluster; pg_stat_statements, top-level statements):',
        buffers('backfill', backfill.postgres),
        buffers(`writer (${seconds(writer.writerMs)})`, writer.writerPostgres),
        buffers(`COPY (${seconds(writer.copyMs)})`, writer.copyPostgres),
        buffers('busy venue', busy.postgres),
        `Busy venue, Postgres backend CPU µs/row by page: ${busy.value.backendMicrosPerRow.join(' ')}; wall µs/row: ${busy.value.microsPerRow.join(' ')} (last ÷ first ${busy.value.wallLastVsFirst.toFixed(2)}); settle of its day ${busy.value.settleMs.toFixed(0)} ms.`,
        `Backfill waits: Postgres ${seconds(b.io.postgresMs)} over ${b.io.postgresQueries} queries (${(b.io.postgresQueries / windows.length).toFixed(1)} per window, ${(b.io.postgresQueries / b.requests).toFixed(1)} per request, ${b.io.postgresCommits} explicit commits), ` +
          `Redis ${seconds(b.io.redisMs)} over ${b.io.redisCommands} commands (summed over the two windows in flight, so they can exceed the wall time).`,
        `Pipeline RSS: baseline ${mb(b.baselineRssBytes)}, peak sampled ${mb(b.peakRssBytes)} (the highest of the ${PAIRED_RUNS} runs: ${mb(peakRssBytes)}), ru_maxrss ${mb(b.maxRssBytes)}; simulator ru_maxrss ${mb(backfill.simulatorRssBytes)}. Pipeline child's flags: [${workerFlags}].`,
        `Writer: ${writer.pages} pages, ${writer.rows.toLocaleString('en')} distinct rows; COPY: ${writer.copyMethod} (${writer.copyRuns.map((run) => seconds(run.ms)).join(', ')}).`,
        `Phases: backfill ${seconds(b.elapsedMs)}, bare fetch ${seconds(bare.value.elapsedMs)}, writer-vs-COPY ${seconds(phaseMs.writer)}, look-back ${seconds(phaseMs.lookback)}.`,
        `Look-back: ${lookback.passes} passes every ${lookback.passEveryMs / 1000} s over ${lookback.measuredMs / HOUR_MS} h simulated, ${lookback.arrivals} arrivals; ` +
          `${lookback.probes} probes + ${lookback.repageRequests} re-page requests (forward paging: ${lookback.forwardRequests}); ` +
          `windows in the 24 h look-back: ${lookback.windowsInLookbackAtStart} at hour 1, ${lookback.windowsInLookbackAtEnd} at hour 4, ~${lookback.steadyState.windowsInLookback.toFixed(0)} projected at hour 24.`,
        `Results: ${RESULTS_PATH}`,
        '',
      ].join('\n'),
    );
  } finally {
    await closeRuntime?.();
    await sim.close();
    for (const database of databases) await database.drop();
    await postgres.stop();
    await rm(csvPath, { force: true });
  }
}

function percent(share: number): string {
  return `${(share * 100).toFixed(1)} %`;
}

function omitValue<T extends { value: unknown }>(phase: T): Omit<T, 'value'> {
  const { value: _value, ...rest } = phase;
  return rest;
}

/** Phase 6 alone, three times (`--busy-venue-only`): its figure and each page's backend CPU. */
async function busyVenueOnly(): Promise<void> {
  const postgres = await startBenchPostgres();
  try {
    const day = new Date(Math.floor(Date.now() / 86_400_000 - 2) * 86_400_000);
    for (let run = 1; run <= 3; run++) {
      const database = await createBenchDatabase(postgres.url, 'busy');
      try {
        const busy = await measureBusyVenue({
          url: database.url,
          perDay: BUSY_VENUE_PER_DAY,
          pageSize: PAGE_SIZE,
          day,
        });
        process.stdout.write(
          `busy venue run ${run}: last ÷ first ${busy.lastVsFirst.toFixed(2)}× (${busy.lastMicrosPerRow.toFixed(0)} vs ${busy.firstMicrosPerRow.toFixed(0)} µs/row); backend µs/row by page: ${busy.backendMicrosPerRow.join(' ')}\n`,
        );
      } finally {
        await database.drop();
      }
    }
  } finally {
    await postgres.stop();
  }
}

if (args['busy-venue-only']) await busyVenueOnly();
else await main();
