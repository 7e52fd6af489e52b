import { expect } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import type { RunningSimulator } from '../../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { createPipelineHarness } from '../../helpers/pipeline.js';
import { testRedisPrefix } from '../../helpers/redis.js';
import type { RedisServerProcess } from '../../helpers/redis-topology.js';
import {
  CHAOS_ENCRYPTION_KEY,
  CHAOS_WEBHOOK_SECRET,
  chaosEnv,
  sleep,
  startWebhookReceiver,
  waitFor,
  type WebhookReceiver,
} from './chaos-env.js';
import { isAlive, runCli, startCli, stopCli, type CliProcess } from './cli-process.js';
import { chaosSeed, seededRandom } from './prng.js';
import { recordChaosResult } from './results.js';
import { allWindowsComplete, tallyCheckIns, windowStatuses } from './warehouse-checks.js';

// Issue 38: the primary killed -9 at seeded random moments while a backfill pages (the simulator
// answers in 100–200 ms, so requests are in flight), payment intents are paid (alerts on their way)
// and a worker holds its blocking connections. Successive backfills, one per kill; after each kill
// every promise of the issue is checked before the next one. The test files start the topology
// (never the machine's Redis) and adapt it to FailoverTarget.

const HOUR = 3_600_000;
/** Requests per second the worker may send (the simulator enforces the same). */
const RPS = 10;
/** Small pages: ~600 check-ins take ~30 pages, so the backfill is paging when the primary dies. */
const PAGE_SIZE = 20;
/** Each kill's backfill range. */
const RANGE_MS = 2 * HOUR;
const INTENTS_PER_KILL = 2;
/** Check-ins added to each kill's range (older than CHECKINS_START_AT), on top of the simulator's own. */
const CHECK_INS_PER_RANGE = 600;
/** The issue's bound: the promoted primary serves the product within this of the promotion. */
const SERVE_BOUND_MS = 30_000;

export interface FailoverTarget {
  kind: 'cluster' | 'sentinel';
  env: Record<string, string>;
  /** The primary holding the keys under this (effective) prefix. */
  primaryFor(keyPrefix: string): Promise<RedisServerProcess>;
  /** Resolves when another node is primary for the prefix and answers as one (bounded). */
  waitForPromotion(keyPrefix: string, old: RedisServerProcess): Promise<RedisServerProcess>;
  /** After the killed primary is started again: it replicates the new one, and the topology knows it. */
  rejoined(old: RedisServerProcess, promoted: RedisServerProcess): Promise<void>;
  /**
   * Before a kill: varies how long the failover takes (seeded), since which moment of a client's
   * reconnect loop the promotion meets depends on it. Returns what it chose, for the record.
   */
  beforeKill?(random: () => number): Promise<string>;
}

export interface FailoverUnderLoadOptions {
  label: string;
  target: FailoverTarget;
  sim: RunningSimulator;
  /** The kills' backfill ranges end here (2 h each, consecutive, oldest first). */
  rangesEnd: Date;
  /** CHECKINS_START_AT: everything the backfills page is older. */
  startAt: Date;
  kills: number;
}

export interface KillRecord {
  kill: number;
  range: string;
  killedAfterPagingMs: number;
  /** What the target varied for this kill (a Sentinel's down-after-milliseconds). */
  failover: string;
  secondsToPromotion: number;
  /** From the promotion until /readyz is 200 and a window was completed through the new primary. */
  secondsToRecovery: number;
  checkIns: number;
  rowsLost: number;
  duplicates: number;
  verifyExit: number | null;
  alertPosts: number[];
}

/** The kills' ranges: consecutive 2 h ranges, oldest first, the last ending at `end`. */
export function killRanges(end: Date, kills: number): Array<{ from: Date; to: Date }> {
  const start = end.getTime() - kills * RANGE_MS;
  return Array.from({ length: kills }, (_, i) => ({
    from: new Date(start + i * RANGE_MS),
    to: new Date(start + (i + 1) * RANGE_MS),
  }));
}

/** Nearest-rank percentile of seconds. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

interface Run {
  options: FailoverUnderLoadOptions;
  database: TestDatabase;
  receiver: WebhookReceiver;
  env: Record<string, string>;
  prefix: string;
  worker: CliProcess;
  workerExits: number;
  readyzPort: () => number | undefined;
}

export async function failoverUnderLoad(options: FailoverUnderLoadOptions): Promise<KillRecord[]> {
  const seed = chaosSeed();
  const random = seededRandom(seed);
  console.log(
    `[chaos] ${options.label} failover under load: CHAOS_SEED=${seed} (set it to replay), ${options.kills} kills`,
  );
  const ranges = killRanges(options.rangesEnd, options.kills);
  for (const range of ranges) options.sim.control.checkIns.addLate(CHECK_INS_PER_RANGE, range);
  const run = await startRun(options, options.startAt);
  const records: KillRecord[] = [];
  try {
    for (const [i, range] of ranges.entries()) {
      records.push(await killDuringBackfill(run, i + 1, range, random));
    }
  } finally {
    stopping.add(run.worker);
    await stopCli(run.worker, 10_000);
    await run.receiver.close();
    await run.database.drop();
    options.sim.control.faults.reset();
  }
  const recovery = records.map((record) => record.secondsToRecovery);
  const summary = {
    seed,
    kills: records.length,
    recovered: records.filter((record) => record.verifyExit === 0).length,
    workerExits: run.workerExits,
    recoverySecondsP50: percentile(recovery, 50),
    recoverySecondsP95: percentile(recovery, 95),
    recoverySecondsMax: Math.max(...recovery),
    promotionSecondsP50: percentile(
      records.map((record) => record.secondsToPromotion),
      50,
    ),
    checkIns: records.reduce((sum, record) => sum + record.checkIns, 0),
    rowsLost: records.reduce((sum, record) => sum + record.rowsLost, 0),
    duplicates: records.reduce((sum, record) => sum + record.duplicates, 0),
    alertsPosted: records.reduce((sum, record) => sum + record.alertPosts.length, 0),
    perKill: records,
  };
  recordChaosResult(`${options.label}-failover-under-load`, summary);
  console.log(
    `[chaos] ${options.label}: ${summary.recovered}/${summary.kills} kills recovered; recovery after promotion p50 ${summary.recoverySecondsP50} s, p95 ${summary.recoverySecondsP95} s, max ${summary.recoverySecondsMax} s`,
  );
  expect(run.workerExits, 'the worker never had to exit').toBe(0);
  return records;
}

async function startRun(options: FailoverUnderLoadOptions, startAt: Date): Promise<Run> {
  const { sim, label, target } = options;
  const database = await createTestDatabase(`${label}_under_load`);
  const receiver = await startWebhookReceiver();
  const env = chaosEnv({
    sim,
    databaseUrl: database.url,
    redisPrefix: testRedisPrefix(`${label}-load`),
    startAt,
    window: '1h',
    webhookUrl: receiver.url,
    webhookSecret: CHAOS_WEBHOOK_SECRET,
    encryptionKey: CHAOS_ENCRYPTION_KEY,
    rps: RPS,
    extra: {
      ...target.env,
      SVC_PAGE_SIZE: String(PAGE_SIZE),
      CHECKINS_LOOKBACK: '2h',
      WORKER_IDLE_TIMEOUT: '30s',
      SVC_OAUTH_REFRESH_TOKEN: sim.control.credentials.issueRefreshToken({
        memberId: sim.control.members.defaultMemberId,
      }),
    },
  });
  const prefix = loadConfig(env).redisPrefix;
  sim.control.faults.set({ rateLimitRps: RPS, latencyMs: 150 });
  const run: Run = {
    options,
    database,
    receiver,
    env,
    prefix,
    worker: startCli(`${label}-load-worker-0`, ['worker', '--shutdown-deadline', '5'], env),
    workerExits: 0,
    readyzPort: () => readyzPortOf(run.worker),
  };
  // A supervisor: a worker that exits is started again (and counted; the test expects none).
  const supervise = async (): Promise<void> => {
    const exited = run.worker;
    await exited.exited;
    if (stopping.has(exited)) return;
    run.workerExits++;
    run.worker = startCli(`${label}-load-worker-${run.workerExits}`, ['worker'], env);
    void supervise();
  };
  void supervise();
  const up = await waitFor(async () => (await readyz(run)) === 200, 60_000, 300);
  if (!up) throw new Error(`worker not ready:\n${run.worker.stderr().slice(-2_000)}`);
  return run;
}

/** Workers the test itself stops (not counted as exits). */
const stopping = new Set<CliProcess>();

function readyzPortOf(worker: CliProcess): number | undefined {
  const line = worker
    .stderr()
    .split('\n')
    .find((text) => text.includes('status page on'));
  const port = line === undefined ? undefined : /"port":(\d+)/.exec(line)?.[1];
  return port === undefined ? undefined : Number(port);
}

async function readyz(run: Run): Promise<number | undefined> {
  const port = run.readyzPort();
  if (port === undefined) return undefined;
  try {
    const response = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(4_000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return undefined;
  }
}

async function killDuringBackfill(
  run: Run,
  kill: number,
  range: { from: Date; to: Date },
  random: () => number,
): Promise<KillRecord> {
  const { sim, label, target } = run.options;
  const db = run.database.db;
  const pagedBefore = checkInRequests(sim, range);
  const opening = openIntents(run, kill);
  const backfill = startCli(
    `${label}-load-backfill-${kill}`,
    ['backfill', '--from', range.from.toISOString(), '--to', range.to.toISOString(), '--wait'],
    run.env,
  );
  // The kill: a seeded moment after this backfill's first check-in request.
  const paging = await waitFor(() => Promise.resolve(checkInRequests(sim, range) > pagedBefore), 60_000, 50);
  expect(paging, `backfill ${kill} never paged:\n${backfill.stderr().slice(-1_500)}`).toBe(true);
  const pagingAt = Date.now();
  const delay = Math.round(200 + random() * 2_300);
  const [intents] = await Promise.all([opening, sleep(delay)]);
  for (const intent of intents) sim.control.intents.pay(intent);
  const failover = (await target.beforeKill?.(random)) ?? 'as configured';
  const primary = await target.primaryFor(run.prefix);
  const killedAt = Date.now();
  await primary.kill();
  const promoted = await target.waitForPromotion(run.prefix, primary);
  const promotedAt = Date.now();

  // Served by the new primary: /readyz 200 and a window completed through it (or none left).
  let recoveredAt = 0;
  const served = await waitFor(
    async () => {
      if ((await readyz(run)) !== 200) return false;
      const row = await db
        .selectFrom('rewards.sync_windows')
        .select((eb) => eb.fn.max('completed_at').as('last'))
        .where('stream', '=', 'checkins')
        .executeTakeFirst();
      const last = row?.last == null ? 0 : new Date(row.last).getTime();
      if (last <= promotedAt && !(await allWindowsComplete(db, range.from, range.to))) return false;
      recoveredAt = Date.now();
      return true;
    },
    SERVE_BOUND_MS,
    200,
  );
  // Put the killed server back (as a replica) while the rest settles.
  const rejoined = primary.restart().then(() => target.rejoined(primary, promoted));
  expect(
    served,
    `kill ${kill}: not served within 30 s of the promotion; windows ${JSON.stringify(await windowStatuses(db))}`,
  ).toBe(true);

  const done = await Promise.race([backfill.exited, sleep(180_000).then(() => undefined)]);
  expect(done?.code, `kill ${kill}: backfill --wait\n${backfill.stderr().slice(-2_000)}`).toBe(0);
  expect(await allWindowsComplete(db, range.from, range.to)).toBe(true);
  const [apiTotal, tally, verify, alertPosts] = await Promise.all([
    countInApi(run, range),
    tallyCheckIns(db, range.from, range.to),
    runCli(
      `${label}-load-verify-${kill}`,
      ['verify', '--from', range.from.toISOString(), '--to', range.to.toISOString()],
      run.env,
    ),
    alertsPosted(run, intents),
    rejoined,
  ]);
  const ready = await waitFor(async () => (await readyz(run)) === 200, 30_000, 300);
  const record: KillRecord = {
    kill,
    range: `${range.from.toISOString()}..${range.to.toISOString()}`,
    killedAfterPagingMs: killedAt - pagingAt,
    failover,
    secondsToPromotion: (promotedAt - killedAt) / 1000,
    secondsToRecovery: (recoveredAt - promotedAt) / 1000,
    checkIns: tally.distinct,
    rowsLost: apiTotal - tally.distinct,
    duplicates: tally.rows - tally.distinct,
    verifyExit: verify.code,
    alertPosts,
  };
  console.log(`[chaos] ${label} kill ${kill}: ${JSON.stringify(record)}`);
  expect(record.rowsLost).toBe(0);
  expect(record.duplicates).toBe(0);
  expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  expect(alertPosts).toEqual(intents.map(() => 1));
  expect(ready, `kill ${kill}: /readyz not 200 again`).toBe(true);
  expect(isAlive(run.worker)).toBe(true);
  return record;
}

/** Check-in page requests (not count probes) the simulator answered for this range so far. */
function checkInRequests(sim: RunningSimulator, range: { from: Date; to: Date }): number {
  return sim.control.requests
    .list()
    .filter(
      (entry) =>
        entry.path === '/v1/check_ins' &&
        entry.query.page_size !== '1' &&
        Date.parse(entry.query.created_after ?? '') >= range.from.getTime() &&
        Date.parse(entry.query.created_before ?? '') <= range.to.getTime(),
    ).length;
}

/** Intents created now and recorded as open by the pipeline, ready to be paid at the kill. */
async function openIntents(run: Run, kill: number): Promise<string[]> {
  const { sim, label } = run.options;
  const ids = Array.from(
    { length: INTENTS_PER_KILL },
    (_, i) => sim.control.intents.create({ description: `${label} kill ${kill} #${i}` }).id,
  );
  const seen = await waitFor(
    async () =>
      (
        await run.database.db
          .selectFrom('rewards.payment_intents')
          .select('id')
          .where('id', 'in', ids)
          .execute()
      ).length === ids.length,
    60_000,
    300,
  );
  expect(seen, `kill ${kill}: intents never recorded as open`).toBe(true);
  return ids;
}

/** For each paid intent, how many times its alert was POSTed (waits until each was, bounded). */
async function alertsPosted(run: Run, intents: string[]): Promise<number[]> {
  const db = run.database.db;
  const alertOf = async () =>
    db
      .selectFrom('rewards.alerts')
      .select(['id', 'payment_intent_id'])
      .where('payment_intent_id', 'in', intents)
      .execute();
  await waitFor(
    async () => {
      const alerts = await alertOf();
      return (
        alerts.length >= intents.length && alerts.every((alert) => run.receiver.received.includes(alert.id))
      );
    },
    90_000,
    300,
  );
  // A redelivery would arrive after the first POST: give it a moment to show.
  await sleep(1_000);
  const alerts = await alertOf();
  return intents.map((intent) => {
    const rows = alerts.filter((alert) => alert.payment_intent_id === intent);
    if (rows.length !== 1) return -rows.length;
    return run.receiver.received.filter((id) => id === rows[0]!.id).length;
  });
}

async function countInApi(run: Run, range: { from: Date; to: Date }): Promise<number> {
  const harness = createPipelineHarness({
    sim: run.options.sim,
    db: run.database.db,
    label: `${run.options.label}-load-probe`,
  });
  try {
    return await harness.deps.api.countCheckIns({ createdAfter: range.from, createdBefore: range.to });
  } finally {
    await harness.close();
  }
}
