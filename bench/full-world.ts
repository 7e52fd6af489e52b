// The full world at real time (issue 32): the feed's lag, paid-alert latency, 429s, requests per
// hour per stream and the adaptive reads' unchanged share, with every stream running at once.
//   node --import tsx bench/full-world.ts [--full] [--minutes N] [--members N] [--pay N] [--in-process]
//     [--token-expiry uniform|reads]
// Default: 2,000 members connected, 5 minutes measured (about 7 minutes in all); --full: all
// 10,000 members (their first reads take about 5 minutes of setup on this machine), 10 minutes.
//
// Method (BENCHMARKS.md, "Full world"): the simulator runs in this process with the production
// world (5,000 restaurants, 20,000 locations, 10,000 challenges, 10,000 members, 1,000 open
// intents), its change model on (2,000 feed check-ins an hour, intents opened and settled, members
// dining, …) and time scale 1. Setup, outside the measurement: `--members` members connected
// (their refresh tokens exchanged at the token endpoint) and one pass of every stream with the
// limit lifted, on a Redis prefix of its own (so neither the measured limiter nor its ledger sees
// them), then every adaptive read's time moved back by a random part of its interval (a steady
// state), and each member's access-token expiry set as at the steady state (`--token-expiry reads`,
// the default: a member read every I minutes refreshes at every k-th read, k = ceil(58 min / I), so
// the expiry is 60 min after one of its last k reads; `uniform`: a random moment of the next hour,
// which in a short run undercounts refreshes about tenfold). Measured: two workers, each a
// child process started as deployed (`src/cli/main.ts worker`; `--in-process`: startWorker in this
// process, the old way), at SVC_RATE_LIMIT_RPS=10 with the default shares, on their own database
// and Redis prefix, for `--minutes`, with an alert receiver; the simulator's token bucket set to
// 10 rps (per credential) so an excess shows as 429s. The bench pays `--pay` intents (open, their
// full form already read) at random moments.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../src/config/config.js';
import { createRedisClient } from '../src/redis/connection.js';
import { deleteKeysWithPrefix } from '../src/redis/delete-keys.js';
import { PRODUCTION_WORLD_SIZE, startSimulator, type RunningSimulator } from '../src/simulator/index.js';
import { createBenchDatabase } from './lib/bench-database.js';
import {
  busiestSecond,
  collectRequests,
  feedCheckInsCreated,
  feedLags,
  ledgerSpend,
  percentile,
  readTotals,
  startAlertReceiver,
  passesByStream,
  passTimes,
  syncRunRequests,
  tokenEndpointPosts,
  tokenRowsRefreshed,
  type LoggedRequest,
  unchangedShares,
} from './lib/full-world-measure.js';
import {
  connectMembers,
  payAtRandom,
  type Payments,
  markLocationsRead,
  memberTokenExpiryAfterReads,
  spreadMemberTokenExpiry,
  spreadReads,
  warmUp,
} from './lib/full-world-setup.js';
import { startChildWorkers, startInProcessWorkers, type MeasuredWorkers } from './lib/full-world-workers.js';
import type { Kysely } from 'kysely';
import type { DB } from '../src/warehouse/schema.js';
import { benchLogger } from './lib/bench-logger.js';

const PG = 'postgres://postgres@127.0.0.1:5432/postgres';
const MIN = 60_000;
const RATE_LIMIT_RPS = 10;
/** The feed's world: 2,000 check-ins an hour (issue 32), one day of history. */
const FEED_PER_DAY = 48_000;
/**
 * Schedules shortened so that each adaptive stream runs a pass every 2 minutes of the run (their
 * defaults are 15 min and 1 h): each pass reads what is due, so the requests per hour stay those of
 * the cadence while a short run sees several passes.
 */
const SHORTENED = { MEMBERS_EVERY: '2m', CHALLENGES_EVERY: '2m', LOCATIONS_EVERY: '2m' };
/** Check-ins created this close to the end are left out of the feed's lag: they had no time to arrive. */
const FEED_TAIL_MS = 3 * MIN;
/** Members connected by default: their first reads are the setup's slowest part (~10 members/s). */
const DEFAULT_MEMBERS = 2_000;
const GOALS = { feedLagSeconds: 120, paidAlertP95Seconds: 3, responses429: 0 };

function argument(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  const value = at > 0 ? Number(process.argv[at + 1]) : fallback;
  if (!(value > 0)) throw new Error(`${name} must be a positive number`);
  return value;
}

function envFor(options: {
  sim: RunningSimulator;
  databaseUrl: string;
  prefix: string;
  encryptionKey: string;
  webhook: { url: string; secret: string };
  checkinsFrom: Date;
}): Record<string, string> {
  const { sim } = options;
  return {
    DATABASE_URL: options.databaseUrl,
    REDIS_PREFIX: options.prefix,
    SVC_API_BASE_URL: sim.baseUrl,
    SVC_API_KEY: sim.credentials.apiKey,
    SVC_OAUTH_CLIENT_ID: sim.credentials.clientId,
    SVC_OAUTH_CLIENT_SECRET: sim.credentials.clientSecret,
    SVC_OAUTH_REFRESH_TOKEN: sim.credentials.refreshToken,
    TOKEN_ENCRYPTION_KEY: options.encryptionKey,
    SVC_RATE_LIMIT_RPS: String(RATE_LIMIT_RPS),
    ALERT_WEBHOOK_URL: options.webhook.url,
    ALERT_WEBHOOK_SECRET: options.webhook.secret,
    CHECKINS_START_AT: options.checkinsFrom.toISOString(),
    HTTP_PORT: '0',
    LOG_LEVEL: 'error',
    ...SHORTENED,
  };
}

async function measure(input: {
  sim: RunningSimulator;
  db: Kysely<DB>;
  /** When the workers were started and the request log cleared: `start` is when they were ready. */
  logFrom: Date;
  start: Date;
  end: Date;
  requests: LoggedRequest[];
  spend: Record<string, number>;
  reads: ReturnType<typeof unchangedShares>;
  paid: Payments;
  received: Map<string, number>;
}) {
  const { start, end } = input;
  const hours = (end.getTime() - start.getTime()) / 3_600_000;
  const feedTo = new Date(end.getTime() - FEED_TAIL_MS);
  const created = await feedCheckInsCreated(input.sim, start, feedTo);
  const feed = await feedLags(input.db, created, end.getTime());
  const latencies: number[] = [];
  // Each payment with its latency, and the passes' times: what a slow alert can be set against.
  const paidAlerts: Array<{ paidAt: string; seconds: number | null }> = [];
  for (const [id, paidAt] of input.paid.paidAt) {
    const at = input.received.get(id);
    if (at !== undefined) latencies.push((at - paidAt) / 1000);
    paidAlerts.push({
      paidAt: new Date(paidAt).toISOString(),
      seconds: at === undefined ? null : (at - paidAt) / 1000,
    });
  }
  const perHour = (counts: Record<string, number>) =>
    Object.fromEntries(Object.entries(counts).map(([stream, n]) => [stream, Math.round(n / hours)]));
  const round = (value: number | null, digits = 2) => (value === null ? null : Number(value.toFixed(digits)));
  const spent = Object.values(input.spend).reduce((sum, n) => sum + n, 0);
  return {
    feedLagP95Seconds: round(percentile(feed.lagsSeconds, 95), 1),
    paidAlertP95Seconds: round(percentile(latencies, 95)),
    responses429: input.requests.filter((r) => r.status === 429).length,
    requestsPerHourByStream: perHour(input.spend),
    unchangedRequestShare: round(input.reads.share, 3),
    feedLagP50Seconds: round(percentile(feed.lagsSeconds, 50), 1),
    feedLagMaxSeconds: round(percentile(feed.lagsSeconds, 100), 1),
    feedCheckIns: created.size,
    feedCheckInsUnseen: feed.unseen,
    feedCreatedFrom: start.toISOString(),
    feedCreatedTo: feedTo.toISOString(),
    paidAlertP50Seconds: round(percentile(latencies, 50)),
    paidAlertMaxSeconds: round(percentile(latencies, 100)),
    paid: input.paid.paidAt.size,
    paidAlertsReceived: latencies.length,
    payAttemptsWithoutCandidate: input.paid.failed,
    requestsSimulatorSaw: input.requests.length,
    achievedRps: round(input.requests.length / (hours * 3600)),
    busiestSecond: busiestSecond(input.requests),
    tokenRefreshes: {
      ...tokenEndpointPosts(input.requests),
      rowsRefreshed: await tokenRowsRefreshed(input.db, input.logFrom, end),
    },
    requestsPerHour: Math.round(spent / hours),
    syncRunRequestsPerHour: perHour(await syncRunRequests(input.db, start, end)),
    passes: await passesByStream(input.db, start, end),
    readsByKind: input.reads.perKind,
    paidAlerts,
    passTimes: await passTimes(input.db, start, end, ['members', 'challenges', 'locations', 'restaurants']),
    adaptiveReads: input.reads.reads,
  };
}

function printReport(
  report: Awaited<ReturnType<typeof measure>> & {
    members: number;
    minutes: number;
    workers: string;
    setup: { seconds: number; memberTokenExpiry: string };
  },
): void {
  const line = (label: string, value: string, goal = '') =>
    `${label.padEnd(34)}${value.padStart(18)}  ${goal}\n`;
  const s = (value: number | null) => (value === null ? '—' : `${value} s`);
  const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS');
  let out = `\nfull world at 10 rps, ${report.members.toLocaleString('en-US')} members connected, ${report.minutes} min real time (setup ${report.setup.seconds} s), workers: ${report.workers}, member token expiry: ${report.setup.memberTokenExpiry}\n`;
  out += line('feed lag p50', s(report.feedLagP50Seconds));
  out += line(
    `feed lag p95 (${report.feedCheckIns} check-ins)`,
    s(report.feedLagP95Seconds),
    `goal <= ${GOALS.feedLagSeconds} s: ${verdict((report.feedLagP95Seconds ?? Infinity) <= GOALS.feedLagSeconds)}`,
  );
  out += line('feed lag max / unseen', `${s(report.feedLagMaxSeconds)} / ${report.feedCheckInsUnseen}`);
  out += line('paid alert p50', s(report.paidAlertP50Seconds));
  out += line(
    `paid alert p95 (${report.paidAlertsReceived}/${report.paid} received)`,
    s(report.paidAlertP95Seconds),
    `goal <= ${GOALS.paidAlertP95Seconds} s: ${verdict(report.paidAlertsReceived === report.paid && (report.paidAlertP95Seconds ?? Infinity) <= GOALS.paidAlertP95Seconds)}`,
  );
  out += line('paid alert max', s(report.paidAlertMaxSeconds));
  out += line('429 responses', String(report.responses429), `goal 0: ${verdict(report.responses429 === 0)}`);
  out += line('requests/s achieved, busiest second', `${report.achievedRps} / ${report.busiestSecond}`);
  const refreshes = report.tokenRefreshes;
  out += line(
    'token refreshes (POST /oauth/token)',
    `${refreshes.posts} (${refreshes.ok} ok)`,
    `rows refreshed: ${refreshes.rowsRefreshed.members} members, ${refreshes.rowsRefreshed.other} service`,
  );
  out += line('requests/h (ledger)', String(report.requestsPerHour));
  for (const [stream, n] of Object.entries(report.requestsPerHourByStream).sort((a, b) => b[1] - a[1]))
    out += line(`  ${stream}`, String(n), `sync_runs: ${report.syncRunRequestsPerHour[stream] ?? 0}/h`);
  out += line(
    'adaptive reads, unchanged share',
    `${report.adaptiveReads} / ${report.unchangedRequestShare === null ? '—' : `${Math.round(report.unchangedRequestShare * 100)} %`}`,
  );
  for (const [kind, r] of Object.entries(report.readsByKind))
    out += line(
      `  ${kind}`,
      `${r.reads} / ${r.unchangedShare === null ? '—' : `${Math.round(r.unchangedShare * 100)} %`}`,
    );
  process.stdout.write(out);
}

async function main(): Promise<void> {
  const full = process.argv.includes('--full');
  const minutes = argument('--minutes', full ? 10 : 5);
  const memberCount = argument('--members', full ? PRODUCTION_WORLD_SIZE.members : DEFAULT_MEMBERS);
  const payCount = argument('--pay', 60);
  const inProcess = process.argv.includes('--in-process');
  const tokenExpiry = process.argv.includes('--token-expiry')
    ? process.argv[process.argv.indexOf('--token-expiry') + 1]
    : 'reads';
  if (tokenExpiry !== 'uniform' && tokenExpiry !== 'reads')
    throw new Error('--token-expiry must be uniform or reads');
  const setupStarted = performance.now();
  const sim = await startSimulator({
    size: PRODUCTION_WORLD_SIZE,
    changes: true,
    timeScale: 1,
    days: 1,
    checkIns: FEED_PER_DAY,
  });
  const database = await createBenchDatabase(PG, 'full_world');
  const receiver = await startAlertReceiver();
  const prefix = `bench-full-world-${randomBytes(4).toString('hex')}`;
  const common = {
    sim,
    databaseUrl: database.url,
    encryptionKey: randomBytes(32).toString('base64'),
    webhook: receiver,
    checkinsFrom: new Date(Date.now() - 24 * 3_600_000),
  };
  const env = envFor({ ...common, prefix });
  const config = loadConfig(env);
  const warmConfig = loadConfig({
    ...envFor({ ...common, prefix: `${prefix}-warm-up` }),
    SVC_RATE_LIMIT_RPS: '100000',
    MEMBER_SYNC_SHARE: '1',
  });
  const logger = benchLogger(config);
  const redis = createRedisClient(config.redis, { role: 'long-lived' });
  let workers: MeasuredWorkers | undefined;
  try {
    let t = performance.now();
    const connected = await connectMembers(sim, database.db, warmConfig, logger, memberCount);
    const connectSeconds = (performance.now() - t) / 1000;
    process.stdout.write(`connected ${connected} members in ${connectSeconds.toFixed(0)} s\n`);
    t = performance.now();
    const warm = await warmUp(warmConfig, logger, database.db);
    const warmSeconds = (performance.now() - t) / 1000;
    process.stdout.write(`warm-up in ${warmSeconds.toFixed(0)} s: ${JSON.stringify(warm)}\n`);
    const spread = await spreadReads(database.db);
    const locationsMarked = await markLocationsRead(database.db);
    const readsBefore = await readTotals(database.db);
    const memberTokensSpread = await (tokenExpiry === 'uniform'
      ? spreadMemberTokenExpiry(database.db)
      : memberTokenExpiryAfterReads(database.db));
    const setupSeconds = (performance.now() - setupStarted) / 1000;

    // The measured run: its clock starts once both workers are running (a child answers /readyz).
    sim.control.faults.set({ rateLimitRps: RATE_LIMIT_RPS });
    sim.control.requests.clear();
    const requestLog = collectRequests(sim);
    const logFrom = new Date();
    workers = inProcess ? await startInProcessWorkers(env, 2, logger) : await startChildWorkers(env, 2);
    const start = new Date();
    process.stdout.write(
      `${workers.mode} workers running after ${((start.getTime() - logFrom.getTime()) / 1000).toFixed(1)} s${workers.logs.length > 0 ? `, logs: ${workers.logs.join(', ')}` : ''}\n`,
    );
    const runMs = minutes * MIN;
    const payments = payAtRandom(sim, database.db, payCount, Math.max(MIN / 2, runMs - 30_000));
    await sleep(Math.max(0, start.getTime() + runMs - Date.now()));
    const end = new Date();
    const requests = requestLog.stop();
    // What every process spent and read, taken at the end while the workers still run.
    const spend = await ledgerSpend(redis, config.redisPrefix, start.getTime(), end.getTime());
    const readsAfter = await readTotals(database.db);
    const paid = await payments;
    // Alerts of the last payments still on their way (a few seconds at most).
    const waitUntil = Date.now() + 15_000;
    while ([...paid.paidAt.keys()].some((id) => !receiver.paidReceivedAt.has(id)) && Date.now() < waitUntil)
      await sleep(250);
    await workers.stop(25_000);
    const result = await measure({
      sim,
      db: database.db,
      logFrom,
      start,
      end,
      requests,
      spend,
      reads: unchangedShares(readsBefore, readsAfter),
      paid,
      received: receiver.paidReceivedAt,
    });
    const report = {
      ...result,
      members: connected,
      minutes,
      workers: workers.mode,
      workerStartSeconds: Number(((start.getTime() - logFrom.getTime()) / 1000).toFixed(1)),
      workerExits: workers.exits(),
      workerLogs: workers.logs,
      setup: {
        seconds: Math.round(setupSeconds),
        connectSeconds: Math.round(connectSeconds),
        warmSeconds: Math.round(warmSeconds),
        warmUp: warm,
        readsSpread: spread,
        locationsMarked,
        memberTokensSpread,
        memberTokenExpiry: tokenExpiry,
      },
      shortenedSchedules: SHORTENED,
      rateLimitRps: RATE_LIMIT_RPS,
      badSignatures: receiver.badSignatures(),
    };
    printReport(report);
    mkdirSync('.bench', { recursive: true });
    writeFileSync('.bench/full-world.json', `${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await workers?.stop(5_000);
    await deleteKeysWithPrefix(redis, prefix).catch(() => undefined);
    redis.disconnect();
    receiver.close();
    await database.drop();
    await sim.close();
  }
}

await main();
