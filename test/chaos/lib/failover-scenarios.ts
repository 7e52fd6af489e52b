import { expect } from 'vitest';
import { QUEUES } from '../../../src/worker/queues.js';
import { enqueueWindows } from '../../../jobs/checkins-window.js';
import { loadConfig, type Config } from '../../../src/config/config.js';
import { createHttpTransport, transportOptionsFrom } from '../../../src/api/http-transport.js';
import { runDoctorChecks } from '../../../src/doctor/run-doctor.js';
import { createLogger } from '../../../src/log.js';
import { createOneShotClient, createRedisClient, type RedisClient } from '../../../src/redis/connection.js';
import type { RequestLogEntry, RunningSimulator } from '../../../src/simulator/index.js';
import { readWorkers } from '../../../src/status/queue-depths.js';
import { planCheckinWindows } from '../../../src/streams/checkins/plan.js';
import { dueWindows } from '../../../src/warehouse/sync-window-reads.js';
import { createQueues } from '../../../src/worker/queue-setup.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { createPipelineHarness } from '../../helpers/pipeline.js';
import type { RedisServerProcess } from '../../helpers/redis-topology.js';
import { testRedisPrefix } from '../../helpers/redis.js';
import {
  CHAOS_ENCRYPTION_KEY,
  CHAOS_WEBHOOK_SECRET,
  chaosEnv,
  secretsOf,
  sleep,
  startWebhookReceiver,
  waitFor,
  type WebhookReceiver,
} from './chaos-env.js';
import { isAlive, runCli, startCli, stopCli, type CliProcess } from './cli-process.js';
import { startArrivalMeter, type ArrivalMeter } from './arrival-meter.js';
import { findSecretsInFiles } from './log-scan.js';
import { recordChaosResult } from './results.js';
import { allWindowsComplete, tallyCheckIns, windowStatuses } from './warehouse-checks.js';

// The scenarios of issue 30, run the same way on a Redis Cluster and on a Sentinel set: three
// workers on the topology (scale-out), a primary killed -9 mid-backfill, and a job lost to an
// asynchronous failover re-planned from Postgres. The test files start the topology and adapt it.

export const HOUR = 3_600_000;
const RPS = 10;
// Small pages: more requests per window, so the backfill is still running when the primary dies.
const PAGE_SIZE = 50;

/** `restore: false` for a file's last scenario: the killed primary need not come back as a replica. */
export interface RestoreOption {
  restore?: boolean;
}

/** What the scenarios need of a topology, whatever its kind. */
export interface FailoverTarget {
  kind: 'cluster' | 'sentinel';
  /** REDIS_CLUSTER_NODES or REDIS_SENTINELS and friends: never a REDIS_URL. */
  env: Record<string, string>;
  /** The primary holding the keys under this (effective) prefix. */
  primaryFor(keyPrefix: string): Promise<RedisServerProcess>;
  waitForPromotion(keyPrefix: string, old: RedisServerProcess): Promise<RedisServerProcess>;
  syncedReplicaOf(primary: RedisServerProcess): Promise<RedisServerProcess>;
  /** `redis-cli` on a data node. */
  cli(port: number, ...args: string[]): Promise<string>;
}

export interface ScenarioContext {
  target: FailoverTarget;
  sim: RunningSimulator;
  /** History paged by the backfill: [from, to). */
  from: Date;
  to: Date;
  label: string;
}

interface Fixture {
  name: string;
  /** Stamps each partner-API request as the workers send it (see arrival-meter.ts). */
  meter: ArrivalMeter;
  database: TestDatabase;
  receiver: WebhookReceiver;
  env: Record<string, string>;
  config: Config;
  redis: RedisClient;
  workers: CliProcess[];
  all: CliProcess[];
  close(): Promise<void>;
}

async function fixture(
  context: ScenarioContext,
  name: string,
  extra: Record<string, string> = {},
): Promise<Fixture> {
  const database = await createTestDatabase(`${context.label}_${name}`);
  const receiver = await startWebhookReceiver();
  const meter = await startArrivalMeter(context.sim.baseUrl);
  const env = chaosEnv({
    sim: context.sim,
    databaseUrl: database.url,
    redisPrefix: testRedisPrefix(`${context.label}-${name}`),
    startAt: context.to,
    window: '1h',
    webhookUrl: receiver.url,
    webhookSecret: CHAOS_WEBHOOK_SECRET,
    encryptionKey: CHAOS_ENCRYPTION_KEY,
    rps: RPS,
    extra: {
      ...context.target.env,
      SVC_PAGE_SIZE: String(PAGE_SIZE),
      // The look-back covers the last hours of the range, which hold no ongoing visit (visits last
      // at most 145 min in the simulator), so a verified window is not re-paged for ever.
      CHECKINS_LOOKBACK: '6h',
      // Every 5 s only where the look-back is the point (scale-out); the default elsewhere.
      CHECKINS_LOOKBACK_EVERY: '15m',
      // Above what a healthy loop is silent for (a 10 s wait, or BullMQ's 15 s pause after a failed
      // fetch, plus a wait), so a worker declared stuck here really was (and fails the scenario).
      WORKER_IDLE_TIMEOUT: '30s',
      // Refresh tokens rotate on use: each scenario's warehouse starts from a token of its own.
      SVC_OAUTH_REFRESH_TOKEN: context.sim.control.credentials.issueRefreshToken({
        memberId: context.sim.control.members.defaultMemberId,
      }),
      ...extra,
      SVC_API_BASE_URL: meter.baseUrl,
    },
  });
  const config = loadConfig(env);
  const redis = createRedisClient(config.redis, { role: 'long-lived' });
  const all: CliProcess[] = [];
  const fix: Fixture = {
    name,
    meter,
    database,
    receiver,
    env,
    config,
    redis,
    workers: [],
    all,
    async close() {
      await Promise.all(all.filter(isAlive).map((proc) => stopCli(proc, 5_000)));
      redis.disconnect();
      await meter.close();
      await receiver.close();
      await database.drop();
    },
  };
  return fix;
}

function startWorker(context: ScenarioContext, fix: Fixture, slot: number, args: string[] = []): CliProcess {
  const proc = startCli(
    `${context.label}-${fix.name}-worker${slot}-${fix.all.length}`,
    ['worker', ...args],
    fix.env,
  );
  fix.all.push(proc);
  return proc;
}

/** Waits for a worker's "worker started" line in its log. */
async function started(proc: CliProcess): Promise<void> {
  const ok = await waitFor(
    () => Promise.resolve(proc.stderr().includes('"worker started"') || !isAlive(proc)),
    60_000,
    200,
  );
  if (!ok || !isAlive(proc)) throw new Error(`${proc.name} did not start:\n${proc.stderr().slice(-2_000)}`);
}

/** Intents created one by one, each paid once the pipeline has recorded it as open. */
function payIntents(
  context: ScenarioContext,
  fix: Fixture,
  count: number,
): { paid: string[]; done: Promise<void> } {
  const paid: string[] = [];
  const done = (async () => {
    for (let i = 0; i < count; i++) {
      const intent = context.sim.control.intents.create({ description: `${context.label} ${i}` });
      const seen = await waitFor(
        async () =>
          (await fix.database.db
            .selectFrom('rewards.payment_intents')
            .select('id')
            .where('id', '=', intent.id)
            .executeTakeFirst()) !== undefined,
        120_000,
        300,
      );
      if (!seen) throw new Error(`intent ${intent.id} was never recorded as open`);
      context.sim.control.intents.pay(intent.id);
      paid.push(intent.id);
      await sleep(700);
    }
  })();
  return { paid, done };
}

/** Where the busiest second of the log is, and how its requests spread over 100 ms steps. */
function busiestDetail(stamps: readonly number[]): { busiestAt: string; busiestDetail: string } {
  const times = [...stamps].sort((a, b) => a - b);
  let best = 0;
  let bestStart = times[0] ?? 0;
  for (let first = 0, last = 0; last < times.length; last++) {
    while (times[last]! - times[first]! >= 1_000) first++;
    if (last - first + 1 > best) {
      best = last - first + 1;
      bestStart = times[first]!;
    }
  }
  const steps = Array.from({ length: 20 }, (_, i) => {
    const from = bestStart - 500 + i * 100;
    return times.filter((t) => t >= from && t < from + 100).length;
  });
  return { busiestAt: new Date(bestStart).toISOString(), busiestDetail: steps.join(' ') };
}

/** The most requests in any `spanMs` of these instants. */
export function busiest(stamps: readonly number[], spanMs: number): number {
  const times = [...stamps].sort((a, b) => a - b);
  let most = 0;
  for (let first = 0, last = 0; last < times.length; last++) {
    while (times[last]! - times[first]! >= spanMs) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

/**
 * Check-in pages (not count probes) asked more than once with the same bounds and page, among
 * windows ending before `before` (the look-back re-pages later ones on purpose).
 */
function repeatedPageRequests(entries: readonly RequestLogEntry[], before: Date): number {
  const seen = new Map<string, number>();
  for (const entry of entries) {
    if (entry.path !== '/v1/check_ins' || entry.status !== 200 || entry.query.page_size === '1') continue;
    if (!(Date.parse(entry.query.created_before ?? '') <= before.getTime())) continue;
    const key = `${entry.query.created_after} ${entry.query.created_before} p${entry.query.page ?? '0'} ${entry.query.cursor ?? ''}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return [...seen.values()].filter((count) => count > 1).length;
}

interface Outcome {
  apiTotal: number;
  rowsLost: number;
  duplicates: number;
  verifyExit: number | null;
  intentsPaid: number;
  alertRows: number;
  alertsPerIntent: number[];
  webhookPosts: number;
  webhookDuplicates: number;
  busiestSecond: number;
  /** When the busiest second began, and the requests of each 100 ms around it. */
  busiestAt: string;
  busiestDetail: string;
  busiestThreeSeconds: number;
  /** The same by the simulator's log, which stamps answers (bunched when the test process is busy). */
  busiestSecondAnswered: number;
  tooMany: number;
  windowsRetried: number;
  secretHits: number;
}

/** Waits for every window and alert, then measures what the issue asks (rows, alerts, rate). */
async function settle(
  context: ScenarioContext,
  fix: Fixture,
  paid: string[],
  requests: () => RequestLogEntry[],
): Promise<Outcome> {
  const { from, to, sim } = context;
  const db = fix.database.db;
  const complete = await waitFor(() => allWindowsComplete(db, from, to), 240_000, 1_000);
  expect(complete, JSON.stringify(await windowStatuses(db))).toBe(true);
  const apiTotal = await (async () => {
    const harness = createPipelineHarness({ sim, db, label: `${context.label}-probe` });
    try {
      return await harness.deps.api.countCheckIns({ createdAfter: from, createdBefore: to });
    } finally {
      await harness.close();
    }
  })();
  // The look-back may still be catching late arrivals: wait until the warehouse has them all.
  await waitFor(async () => (await tallyCheckIns(db, from, to)).distinct >= apiTotal, 60_000, 1_000);
  const delivered = await waitFor(
    async () => {
      const rows = await db.selectFrom('rewards.alerts').select('id').execute();
      return rows.length >= paid.length && rows.every((row) => fix.receiver.received.includes(row.id));
    },
    120_000,
    500,
  );
  expect(delivered, `alerts delivered: ${fix.receiver.received.length}`).toBe(true);
  const verify = await runCli(
    `${context.label}-verify-${fix.all.length}`,
    ['verify', '--from', from.toISOString(), '--to', to.toISOString()],
    fix.env,
  );
  const tally = await tallyCheckIns(db, from, to);
  const alerts = await db.selectFrom('rewards.alerts').select(['id', 'payment_intent_id']).execute();
  const log = requests();
  const sent = fix.meter.arrivals();
  const windows = await db
    .selectFrom('rewards.sync_windows')
    .select('attempts')
    .where('stream', '=', 'checkins')
    .execute();
  const posts = fix.receiver.received;
  return {
    apiTotal,
    rowsLost: apiTotal - tally.distinct,
    duplicates: tally.rows - tally.distinct,
    verifyExit: verify.code,
    intentsPaid: paid.length,
    alertRows: alerts.length,
    alertsPerIntent: paid.map((id) => alerts.filter((alert) => alert.payment_intent_id === id).length),
    webhookPosts: posts.length,
    webhookDuplicates: posts.length - new Set(posts).size,
    busiestSecond: busiest(sent, 1_000),
    ...busiestDetail(sent),
    busiestThreeSeconds: busiest(sent, 3_000),
    busiestSecondAnswered: busiest(
      log.map((entry) => Date.parse(entry.at)),
      1_000,
    ),
    tooMany: log.filter((entry) => entry.status === 429).length,
    windowsRetried: windows.filter((w) => w.attempts > 1).length,
    secretHits: findSecretsInFiles(
      fix.all.map((proc) => proc.logPath),
      [...secretsOf(fix.env), fix.env.REDIS_PASSWORD ?? '', fix.env.REDIS_SENTINEL_PASSWORD ?? ''].filter(
        (secret) => secret !== '',
      ),
    ).length,
  };
}

/** What every scenario promises: nothing lost, nothing doubled, one alert per intent, the limit held. */
function expectInvariants(outcome: Outcome): void {
  expect(outcome.verifyExit).toBe(0);
  expect(outcome.rowsLost).toBe(0);
  expect(outcome.duplicates).toBe(0);
  expect(
    outcome.alertsPerIntent.every((n) => n === 1),
    JSON.stringify(outcome.alertsPerIntent),
  ).toBe(true);
  expect(outcome.webhookPosts).toBe(outcome.alertRows);
  expect(outcome.webhookDuplicates).toBe(0);
  // One request per slot of 1000/rps ms across every process, stamped as sent: any second holds at
  // most rps + 1 (a request late in its slot, then rps on time); one more for the meter's jitter.
  expect(outcome.busiestSecond).toBeLessThanOrEqual(RPS + 2);
  expect(outcome.busiestThreeSeconds).toBeLessThanOrEqual(3 * RPS + 2);
  expect(outcome.secretHits).toBe(0);
}

/** Every live worker reports itself, none stuck, each having started a job after `since`. */
/**
 * Every live worker reports itself, none stuck, and every queue worker of each has made progress
 * (fetched or started a job) after `since`: none was left idle. Returns when that held.
 */
async function waitNoIdleWorker(
  fix: Fixture,
  since: number,
  expected: number,
): Promise<{ ok: boolean; at: number; detail: string }> {
  let last = '';
  const ok = await waitFor(
    async () => {
      const workers = await readWorkers(fix.redis, fix.config.redisPrefix, Date.now());
      if (!workers.available) return false;
      const progressed = (at: string | null) => at !== null && Date.parse(at) > since;
      last = JSON.stringify(
        workers.live.map((record) => ({
          id: record.id,
          stuck: record.stuck,
          queues: record.queues.map((q) => [q.queue, q.lastFetchAt, q.lastJobStartedAt]),
        })),
      );
      return (
        workers.live.length === expected &&
        workers.live.every(
          (record) =>
            !record.stuck &&
            record.queues.every((q) => progressed(q.lastFetchAt) || progressed(q.lastJobStartedAt)),
        )
      );
    },
    90_000,
    1_000,
  );
  return { ok, at: Date.now(), detail: `worker records: ${last}` };
}

/** Complete windows of the backfill's range (the planner's own windows after it do not count). */
async function completeInRange(fix: Fixture, context: ScenarioContext): Promise<number> {
  const row = await fix.database.db
    .selectFrom('rewards.sync_windows')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('stream', '=', 'checkins')
    .where('status', '=', 'complete')
    .where('window_start', '>=', context.from)
    .where('window_end', '<=', context.to)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** `backfill` before any worker runs: its planning cannot meet a worker's planner holding the lock. */
async function backfill(context: ScenarioContext, fix: Fixture): Promise<void> {
  const ran = await runCli(
    `${context.label}-${fix.name}-backfill`,
    ['backfill', '--from', context.from.toISOString(), '--to', context.to.toISOString()],
    fix.env,
  );
  expect(ran.code, ran.stderr).toBe(0);
  expect(ran.stdout).toMatch(/planned [1-9]\d* new window/);
}

/**
 * The scale-out run (test/integration/worker/scale-out.test.ts) through a failover: three workers
 * share a backfill, the look-back, the snapshots, intents and alerts; one of them is stopped
 * (SIGTERM) mid-run, then the primary holding the project's keys is killed -9 mid-backfill while
 * intents are being paid. Everything the scale-out test asserts must still hold, plus what the
 * failover adds: every queue worker takes jobs again (a stuck one is restarted, as a supervisor
 * would), and the killed server comes back as a replica for the next scenario.
 */
export async function scaleOutThroughFailover(
  context: ScenarioContext,
  options: RestoreOption = {},
): Promise<Record<string, unknown>> {
  const fix = await fixture(context, 'run', { CHECKINS_LOOKBACK_EVERY: '5s' });
  const { sim, from, to, target } = context;
  try {
    sim.control.faults.set({ rateLimitRps: RPS });
    sim.control.requests.clear();
    await backfill(context, fix);
    const args = (slot: number) => ['--shutdown-deadline', slot === 2 ? '1' : '5'];
    fix.workers = [0, 1, 2].map((slot) => startWorker(context, fix, slot, args(slot)));
    await Promise.all(fix.workers.map(started));
    const startedAt = Date.now();
    const intents = payIntents(context, fix, 4);

    // The scale-out hand-off: worker 3 stops while windows remain (a SIGTERM, exit 0).
    await waitFor(async () => (await completeInRange(fix, context)) >= 3, 120_000, 200);
    expect(await stopWorker(fix.workers[2]!)).toEqual({ code: 0, signal: null });
    fix.workers = fix.workers.slice(0, 2);

    // The failover, mid-backfill. A supervisor restarts a worker that exits (a stuck one exits 1).
    let restarts = 0;
    const supervise = setInterval(() => {
      fix.workers = fix.workers.map((proc, slot) => {
        if (isAlive(proc)) return proc;
        restarts++;
        return startWorker(context, fix, slot, args(slot));
      });
    }, 1_000);
    const primary = await target.primaryFor(fix.config.redisPrefix);
    const completeAtKill = await completeInRange(fix, context);
    const killedAt = Date.now();
    await primary.kill();
    let promoted: RedisServerProcess | undefined;
    try {
      promoted = await target.waitForPromotion(fix.config.redisPrefix, primary);
      const promotedAt = Date.now();
      // Watched from now on, alongside the rest: when has every queue worker taken work again?
      const everyWorkerBack = waitNoIdleWorker(fix, promotedAt, 2);
      // Recovered: a window completes after the promotion (work flows through the new primary).
      let recoveredAt = 0;
      await waitFor(
        async () => {
          const row = await fix.database.db
            .selectFrom('rewards.sync_windows')
            .select((eb) => eb.fn.max('completed_at').as('last'))
            .where('stream', '=', 'checkins')
            .executeTakeFirst();
          const last = row?.last === null || row?.last === undefined ? 0 : new Date(row.last).getTime();
          if (last > promotedAt) recoveredAt = last;
          return last > promotedAt;
        },
        120_000,
        200,
      );
      // The look-back: late arrivals into a complete window it covers.
      await waitFor(() => allWindowsComplete(fix.database.db, from, to), 240_000, 1_000);
      const late = sim.control.checkIns.addLate(40, {
        from: new Date(to.getTime() - 2 * HOUR),
        to: new Date(to.getTime() - HOUR - 60_000),
      });
      await intents.done;
      const outcome = await settle(context, fix, intents.paid, () => sim.control.requests.list());
      const snapshots = await snapshotCounts(fix);
      const idle = await everyWorkerBack;
      // Windows the look-back never reaches: each of their pages asked once (but the ≤ 2 in
      // flight when worker 3 let go).
      const repeated = repeatedPageRequests(sim.control.requests.list(), new Date(Date.now() - 7 * HOUR));
      const aroundFailover = fix.meter
        .arrivals()
        .filter((at) => at >= killedAt - 2_000 && at <= promotedAt + 10_000);
      const figures = {
        wallSeconds: Math.round((Date.now() - startedAt) / 1000),
        killedAt: new Date(killedAt).toISOString(),
        busiestSecondAroundFailover: busiest(aroundFailover, 1_000),
        killedPrimary: primary.port,
        promoted: promoted.port,
        windowsCompleteAtKill: completeAtKill,
        windowsInRange: (await windowStatuses(fix.database.db)).complete ?? 0,
        secondsToPromotion: (promotedAt - killedAt) / 1000,
        secondsToFirstWindowAfterKill: (recoveredAt - killedAt) / 1000,
        secondsUntilEveryQueueWorkerProgressed: idle.ok ? (idle.at - killedAt) / 1000 : null,
        stuckExits: fix.all.filter((proc) => proc.stderr().includes('queue worker stuck')).length,
        workerRestarts: restarts,
        lateArrivals: late.length,
        repeatedPageRequests: repeated,
        ...outcome,
        snapshots,
      };
      recordChaosResult(`${context.label}-failover`, figures);
      clearInterval(supervise);
      expect(idle.ok, idle.detail).toBe(true);
      // No worker had to be restarted: the failover left no BullMQ loop hanging (it did, on the
      // Cluster, while ioredis's ready check was on; the watchdog would have restarted it).
      expect(figures.stuckExits).toBe(0);
      const exits = await Promise.all(fix.workers.map(stopWorker));
      expect(exits).toEqual(fix.workers.map(() => ({ code: 0, signal: null })));
      expectInvariants(outcome);
      expect(outcome.tooMany).toBeLessThanOrEqual(2);
      expect(repeated).toBeLessThanOrEqual(2);
      for (const [table, rows] of Object.entries(snapshots)) expect(rows, table).toBeGreaterThan(0);
      return figures;
    } finally {
      clearInterval(supervise);
      if (options.restore !== false) {
        await primary.restart();
        if (promoted !== undefined) await target.syncedReplicaOf(promoted);
      }
    }
  } finally {
    sim.control.faults.reset();
    await fix.close();
  }
}

async function stopWorker(proc: CliProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  await stopCli(proc, 45_000);
  return proc.exited;
}

async function snapshotCounts(fix: Fixture): Promise<Record<string, number>> {
  const db = fix.database.db;
  const count = async (
    table: 'rewards.restaurants' | 'rewards.locations' | 'rewards.challenges' | 'rewards.balance_snapshots',
  ) =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  await waitFor(
    async () => (await count('rewards.balance_snapshots')) > 0 && (await count('rewards.challenges')) > 0,
    60_000,
    1_000,
  );
  return {
    restaurants: await count('rewards.restaurants'),
    locations: await count('rewards.locations'),
    challenges: await count('rewards.challenges'),
    balanceSnapshots: await count('rewards.balance_snapshots'),
  };
}

/**
 * BullMQ: Redis replicates asynchronously, so a write the primary acknowledged can be missing on the
 * replica that is promoted. Made certain here: the replica is frozen and its link cut before the
 * backfill enqueues its windows, then the primary dies. The jobs are gone from Redis; the windows
 * are still `pending` in sync_windows, and the planner of one worker hands them out again.
 */
export async function lostJobReplanned(
  context: ScenarioContext,
  options: RestoreOption = {},
): Promise<Record<string, unknown>> {
  const fix = await fixture(context, 'lost', { CHECKINS_START_AT: context.to.toISOString() });
  const { sim, from, to, target } = context;
  try {
    const primary = await target.primaryFor(fix.config.redisPrefix);
    const replica = await target.syncedReplicaOf(primary);
    const queues = createQueues(fix.config, fix.redis);
    for (const queue of queues.values()) queue.on('error', () => undefined); // the kill is on purpose
    const windowQueue = queues.get(QUEUES.checkinsWindow)!;
    let enqueued = 0;
    let inRedisBefore = 0;
    replica.pause();
    try {
      await target.cli(primary.port, 'client', 'kill', 'type', 'replica');
      const logger = createLogger({ level: 'silent', pretty: false });
      const deps = { db: fix.database.db, clock: { now: () => new Date() }, config: fix.config, logger };
      await planCheckinWindows(deps, { from, to });
      enqueued = await enqueueWindows(windowQueue, await dueWindows(fix.database.db));
      inRedisBefore = (await windowQueue.getJobCounts('waiting')).waiting ?? 0;
      await primary.kill();
    } finally {
      replica.resume();
    }
    const promoted = await target.waitForPromotion(fix.config.redisPrefix, primary);
    const counts = await windowQueue.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed');
    const inRedisAfter = Object.values(counts).reduce((sum, n) => sum + (n ?? 0), 0);
    const pending = (await windowStatuses(fix.database.db)).pending ?? 0;
    await Promise.all([...queues.values()].map((queue) => queue.close()));

    const worker = startWorker(context, fix, 0);
    fix.workers = [worker];
    await started(worker);
    const workerAt = Date.now();
    const done = await waitFor(() => allWindowsComplete(fix.database.db, from, to), 180_000, 500);
    expect(done, JSON.stringify(await windowStatuses(fix.database.db))).toBe(true);
    const tally = await tallyCheckIns(fix.database.db, from, to);
    const apiTotal = await (async () => {
      const probe = createPipelineHarness({ sim, db: fix.database.db, label: `${context.label}-lost-probe` });
      try {
        return await probe.deps.api.countCheckIns({ createdAfter: from, createdBefore: to });
      } finally {
        await probe.close();
      }
    })();
    const figures = {
      windowJobsEnqueued: enqueued,
      jobsInRedisAfterFailover: inRedisAfter,
      windowsPendingInPostgres: pending,
      secondsToCompleteAfterWorkerStart: Math.round((Date.now() - workerAt) / 1000),
      apiTotal,
      rowsLost: apiTotal - tally.distinct,
      duplicates: tally.rows - tally.distinct,
    };
    recordChaosResult(`${context.label}-lost-jobs`, figures);
    expect(await stopWorker(worker)).toEqual({ code: 0, signal: null });
    if (options.restore !== false) {
      await primary.restart();
      await target.syncedReplicaOf(promoted);
    }

    expect(enqueued).toBeGreaterThan(0);
    expect(inRedisBefore).toBe(enqueued);
    // The acknowledged jobs did not survive the failover …
    expect(inRedisAfter).toBe(0);
    expect(pending).toBe(enqueued);
    // … and nothing was lost: Postgres knew every window.
    expect(tally.rows).toBe(tally.distinct);
    expect(tally.distinct).toBe(apiTotal);
    return figures;
  } finally {
    await fix.close();
  }
}

/** `doctor`'s Redis lines on the topology, through the same one-shot client the command uses. */
export async function doctorRedisLines(context: ScenarioContext) {
  const database = await createTestDatabase(`${context.label}_doctor`);
  const config = loadConfig({
    ...context.target.env,
    DATABASE_URL: database.url,
    SVC_API_BASE_URL: context.sim.baseUrl,
    SVC_API_KEY: context.sim.credentials.apiKey,
  });
  const { redis, lastError } = createOneShotClient(config.redis);
  const transport = createHttpTransport({ ...transportOptionsFrom(config.api), timeoutMs: 5_000 });
  try {
    await redis.connect();
    const report = await runDoctorChecks({
      config,
      db: database.db,
      redis,
      redisConnectError: lastError,
      transport,
      logger: createLogger({ level: 'silent', pretty: false }),
    });
    return report.checks.filter((line) => line.check.startsWith('redis'));
  } finally {
    redis.disconnect();
    await transport.close();
    await database.drop();
  }
}
