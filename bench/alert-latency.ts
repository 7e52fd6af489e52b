// Alert latency: simulator paid_at -> webhook received, with N intents open at once.
//   node --import tsx bench/alert-latency.ts [--open 1000,5000,10000] [--paid 1000] [--over 120]
//                                            [--page-size 500,50] [--share 0.1]
// Simulator + the real pipeline (API client, shared rate limit at SVC_RATE_LIMIT_RPS, 10 unless set,
// Postgres, Redis at REDIS_URL or the local default) + a node:http receiver. For each (N, page size):
// open N intents, let the pipeline discover them (the list form: their full forms are read later,
// within the full-form share), then pay M of them at uniformly random moments over the window while
// the payment-intent pass (as the worker runs it: ticking within its slot) and the alerts pass (the
// fallback) run on their schedules. `--open` and `--page-size` are repeatable or comma lists (the page
// size defaults to SVC_PAGE_SIZE when set, else 500, the simulator's maximum; 50 is the documented
// default). Writes `.bench/alert-latency.json` ({ rows: [...] }, one row per scenario).
// The bound: to see every open intent once per T seconds takes ⌈N/page⌉/T list requests, so with the
// intents' allowance A = SVC_RATE_LIMIT_RPS × INTENT_POLL_SHARE requests/s the best p95 is about
// 0.95·⌈N/page⌉/A; the goal is p95 ≤ 1.5 × that + 0.5 s with every payment alerted exactly once.
// That bound holds when the N open intents are the newest rows of the list: a round reads down to
// the oldest open intent, closed ones above it included (the list has no status filter). So each
// scenario first closes every open intent, the simulator world's own and an earlier scenario's, and
// waits until the warehouse shows them closed; the row reports the depth the rounds had to read
// (`depthRows`, `pagesPerRound`).
// Needs Postgres (127.0.0.1:5432, user postgres, or BENCH_PG_ADMIN_URL) and Redis.
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import pg from 'pg';
import { createPartnerApi } from '../src/api/http-partner-api.js';
import { createSpendLedger } from '../src/api/spend-ledger.js';
import type { PartnerApi } from '../src/api/partner-api.js';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config/config.js';
import { INTENT_PASS_TUNING } from '../src/streams/payment-intents/tuning.js';
import { createMetrics } from '../src/metrics.js';
import { DEFAULT_ALERT_DELIVERY_POLICY } from '../src/alerts/delivery-policy.js';
import { createAlertDeliverySlots } from '../src/alerts/delivery-slots.js';
import { createRedisClient } from '../src/redis/connection.js';
import { deleteKeysWithPrefix } from '../src/redis/delete-keys.js';
import { startSimulator } from '../src/simulator/index.js';
import { runAlertsPass } from '../src/alerts/delivery.js';
import { runPaymentIntentsPass } from '../src/streams/payment-intents/pass.js';
import type { PassOutcome, StreamDeps } from '../src/streams/stream.js';
import { verifyRewardsSignature } from '../src/alerts/verify-signature.js';
import { createDatabase } from '../src/warehouse/database.js';
import { ensureDatabase, migrateToLatest } from '../src/warehouse/migrate.js';
import { createTokenStore } from '../src/warehouse/oauth-tokens.js';
import { benchLogger } from './lib/bench-logger.js';
import { writeJson } from './lib/report.js';

const DEFAULT_OPEN = [1_000, 5_000, 10_000];
const DEFAULT_PAGE_SIZE = 500; // the simulator's page_size maximum
const RESULTS_PATH = '.bench/alert-latency.json';
/** How long the pipeline may take to discover N new intents (list pages only). */
const READY_TIMEOUT_MS = 600_000;
const PG_ADMIN = process.env['BENCH_PG_ADMIN_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const { values: args } = parseArgs({
  options: {
    open: { type: 'string', multiple: true },
    paid: { type: 'string', default: '1000' },
    over: { type: 'string', default: '120' },
    'page-size': { type: 'string', multiple: true },
    /** The full-form share (INTENT_PASS_TUNING.fullFormShare unless given). */
    share: { type: 'string' },
    /**
     * Hold the intents to A = SVC_RATE_LIMIT_RPS × INTENT_POLL_SHARE exactly: a feed spending the
     * whole limit is written to the spend ledger every second, so the one budget gives the intents
     * their share and no more (without it, idle other streams leave them the whole limit).
     */
    'pin-share': { type: 'boolean', default: false },
  },
});
const list = (values: readonly string[] | undefined, fallback: readonly number[], name: string): number[] => {
  const numbers = (values ?? [])
    .flatMap((v) => v.split(','))
    .filter((v) => v.trim() !== '')
    .map(Number);
  for (const n of numbers)
    if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} takes positive whole numbers`);
  return numbers.length > 0 ? numbers : [...fallback];
};
const OPEN = list(args.open, DEFAULT_OPEN, 'open');
const envPageSize = process.env['SVC_PAGE_SIZE'];
const PAGE_SIZES = list(
  args['page-size'],
  [envPageSize ? Number(envPageSize) : DEFAULT_PAGE_SIZE],
  'page-size',
);
const PAID = Number(args.paid);
const OVER_MS = Number(args.over) * 1000;
const FULL_FORM_SHARE = args.share === undefined ? undefined : Number(args.share);
if (!Number.isInteger(PAID) || PAID <= 0) throw new Error('--paid takes a positive whole number');
if (!(OVER_MS > 0)) throw new Error('--over takes seconds > 0');

export interface LatencyRow {
  /** `share`: held to A by a simulated feed (--pin-share); `one-budget`: what idle streams leave. */
  allowance: 'share' | 'one-budget';
  open: number;
  paid: number;
  overSeconds: number;
  pageSize: number;
  alertsReceived: number;
  duplicates: number;
  alertsRecorded: number;
  alertsBeforeFullForm: number;
  p50Seconds: number;
  p95Seconds: number;
  maxSeconds: number;
  requestsPerMinute: number;
  /** Of those: list pages, and by-id reads of the full form (the rest: none today). */
  listPagesPerMinute: number;
  fullFormReadsPerMinute: number;
  /** Open rounds completed per minute (every open intent seen once per round): 60 ÷ the round's period. */
  roundsPerMinute: number;
  /**
   * Rows of the list from the newest to the oldest open intent when the payments started: what a
   * round reads (the bound assumes `open`), and its pages.
   */
  depthRows: number;
  pagesPerRound: number;
  /** A × 60: the requests per minute the bound assumes, A = SVC_RATE_LIMIT_RPS × INTENT_POLL_SHARE. */
  boundRequestsPerMinute: number;
  /** 0.95·⌈open/pageSize⌉/A: the best p95 a list read at A allows. The goal is 1.5 × this + 0.5 s. */
  boundP95Seconds: number;
  /**
   * What the one budget actually allowed the intents (averaged over the ticks), × 60: more than A
   * while the other streams are idle, as in this bench.
   */
  allowanceRequestsPerMinute: number;
  /** The bound at that allowance. */
  allowanceBoundP95Seconds: number;
  goalP95Seconds: number;
  withinGoal: boolean;
  readySeconds: number;
  commit: string;
  load1: number;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

/** Runs `pass` every `everyMs` (start to start; a slow pass delays the next, as a repeat job would). */
function onSchedule(
  everyMs: number,
  pass: () => Promise<PassOutcome>,
  stop: AbortSignal,
  sink: { at: number; outcome: PassOutcome }[],
): Promise<void> {
  return (async () => {
    while (!stop.aborted) {
      const started = Date.now();
      try {
        const outcome = await pass();
        if (process.env['BENCH_DEBUG']) console.error(Date.now() - started, JSON.stringify(outcome.details));
        sink.push({ at: started, outcome });
      } catch (error) {
        console.error('pass failed:', error instanceof Error ? error.message : error);
      }
      const wait = everyMs - (Date.now() - started);
      if (wait > 0) await sleep(wait, undefined, { signal: stop }).catch(() => undefined);
    }
  })();
}

function gitCommit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      encoding: 'utf8',
    });
    return dirty.trim() === '' ? head : `${head}+dirty`;
  } catch {
    return 'unknown';
  }
}

const round2 = (n: number) => Math.round(n * 100) / 100;

async function main(): Promise<void> {
  const sim = await startSimulator({ checkIns: 200, days: 1 });
  const dbName = `rewards_etl_bench_${randomBytes(4).toString('hex')}`;
  const dbUrl = `postgres://postgres@127.0.0.1:5432/${dbName}`;
  const prefix = `bench-alerts-${randomBytes(4).toString('hex')}`;
  const secret = `whsec_${randomBytes(16).toString('hex')}`;
  const commit = gitCommit();

  // Every delivery, by intent: the first one's time is the latency, any further one a duplicate.
  const deliveries = new Map<string, number[]>();
  let badSignatures = 0;
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const now = Date.now();
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const verdict = verifyRewardsSignature({ rawBody, header: req.headers['rewards-signature'], secret });
      if (!verdict.ok) badSignatures++;
      const body = JSON.parse(rawBody) as { type: string; data: { payment_intent?: { id: string } } };
      const id = body.data.payment_intent?.id;
      if (body.type === 'payment_intent.paid' && id !== undefined)
        deliveries.set(id, [...(deliveries.get(id) ?? []), now]);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const webhookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/alerts`;

  await ensureDatabase(dbUrl);
  const db = createDatabase({ url: dbUrl, maxConnections: 8 });
  await migrateToLatest(db);
  const env = process.env;
  const config = loadConfig({
    DATABASE_URL: dbUrl,
    ...(env['REDIS_URL'] === undefined ? {} : { REDIS_URL: env['REDIS_URL'] }),
    REDIS_PREFIX: prefix,
    SVC_API_BASE_URL: sim.baseUrl,
    SVC_API_KEY: sim.credentials.apiKey,
    SVC_OAUTH_CLIENT_ID: sim.credentials.clientId,
    SVC_OAUTH_CLIENT_SECRET: sim.credentials.clientSecret,
    SVC_OAUTH_REFRESH_TOKEN: sim.credentials.refreshToken,
    TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    SVC_RATE_LIMIT_RPS: env['SVC_RATE_LIMIT_RPS'] ?? '10',
    ...(env['INTENT_POLL_SHARE'] === undefined ? {} : { INTENT_POLL_SHARE: env['INTENT_POLL_SHARE'] }),
    ALERT_WEBHOOK_URL: webhookUrl,
    ALERT_WEBHOOK_SECRET: secret,
    LOG_LEVEL: 'warn',
  });
  const logger = benchLogger(config, 'warn');
  const redis = createRedisClient(config.redis, { role: 'long-lived' });
  const api = createPartnerApi({ config, redis, tokenStore: createTokenStore(db), logger });
  const deps: StreamDeps<PartnerApi> = {
    db,
    redis,
    api,
    clock: systemClock,
    config,
    logger,
    metrics: createMetrics(),
    alertDeliveries: createAlertDeliverySlots({ concurrency: DEFAULT_ALERT_DELIVERY_POLICY.concurrency }),
  };
  // What the balance stream would have stored: the list gets filtered by the app wallet as payee.
  await db
    .insertInto('rewards.balance_snapshots')
    .values({
      account_balance_id: sim.credentials.appWalletId,
      observed_at: new Date(),
      owner_id: sim.credentials.merchantId,
      balance_value: '0',
      balance_currency: 'svc',
    })
    .execute();
  await runPaymentIntentsPass(deps); // start watching; imports the simulator's history

  const allowanceRps = config.api.rateLimitRps * config.intents.pollShare;
  console.log(
    `alert latency, commit ${commit}, ${args['pin-share'] ? 'intents held to their share' : 'one budget (other streams idle)'}, SVC_RATE_LIMIT_RPS=${config.api.rateLimitRps}, ` +
      `INTENT_POLL_SHARE=${config.intents.pollShare} (A = ${allowanceRps} requests/s), ` +
      `passes every ${config.schedules.paymentIntentsMs} ms (intents) / ${config.schedules.alertsMs} ms (alerts), ` +
      `load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );
  const rows: LatencyRow[] = [];
  const feed = new AbortController();
  if (args['pin-share']) void simulateBusyFeed(feed.signal);
  try {
    for (const pageSize of PAGE_SIZES)
      for (const open of OPEN) {
        const row = await runScenario({ open, pageSize });
        rows.push(row);
        console.log(JSON.stringify(row));
        await writeJson(RESULTS_PATH, { rows });
      }
    if (badSignatures > 0) console.log(`WARNING: ${badSignatures} deliveries failed signature verification`);
  } finally {
    feed.abort();
    await deps.alertDeliveries.close(10_000);
    await api.close();
    redis.disconnect();
    await db.destroy();
    receiver.closeAllConnections();
    receiver.close();
    await sim.close();
    const admin = new pg.Client({ connectionString: PG_ADMIN });
    await admin.connect();
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
    const cleanup = createRedisClient(config.redis, { role: 'long-lived' });
    await deleteKeysWithPrefix(cleanup, config.redisPrefix);
    cleanup.disconnect();
  }
  console.log(`wrote ${RESULTS_PATH}`);

  /** The feed's spend at the whole limit in the ledger: a minute's worth at once, then every second. */
  async function simulateBusyFeed(stop: AbortSignal): Promise<void> {
    const ledger = createSpendLedger({ redis, prefix: config.redisPrefix });
    const rps = config.api.rateLimitRps;
    await ledger.record('checkins', rps * 60);
    while (!stop.aborted) {
      await sleep(1_000, undefined, { signal: stop }).catch(() => undefined);
      if (!stop.aborted) await ledger.record('checkins', rps).catch(() => undefined);
    }
  }

  /**
   * Cancels every intent the simulator has open and runs the payment-intent pass (unmeasured) until
   * the warehouse shows none of them open.
   */
  async function closeOpenIntents(pageSize: number): Promise<void> {
    const open = sim.control.intents
      .list()
      .filter((intent) => intent.status === 'pending')
      .map((intent) => intent.id);
    if (open.length === 0) return;
    for (const id of open) sim.control.intents.cancel(id);
    const settle = new AbortController();
    const loop = onSchedule(
      config.schedules.paymentIntentsMs,
      () =>
        runPaymentIntentsPass(
          { ...deps, signal: settle.signal },
          { slotMs: config.schedules.paymentIntentsMs, sweepPageSize: pageSize },
        ),
      settle.signal,
      [],
    );
    const started = Date.now();
    while (Date.now() - started < READY_TIMEOUT_MS) {
      const stillOpen = await db
        .selectFrom('rewards.payment_intents')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('id', 'in', open)
        .where('status', '=', 'pending')
        .executeTakeFirstOrThrow();
      if (Number(stillOpen.n) === 0) break;
      await sleep(500);
    }
    settle.abort();
    await loop;
  }

  async function runScenario(scenario: { open: number; pageSize: number }): Promise<LatencyRow> {
    const { open, pageSize } = scenario;
    const paid = Math.min(PAID, open);
    // Nothing older may stay open (the simulator world's own intents, the last scenario's unpaid
    // ones): a round reads down to the oldest open intent, every closed row above it included.
    await closeOpenIntents(pageSize);
    const ids = Array.from(
      { length: open },
      (_, i) => sim.control.intents.create({ amount: '1000', description: `bench ${i}` }).id,
    );
    const stop = new AbortController();
    const intentPasses: { at: number; outcome: PassOutcome }[] = [];
    const loops = [
      onSchedule(
        config.schedules.paymentIntentsMs,
        () =>
          runPaymentIntentsPass(
            { ...deps, signal: stop.signal },
            {
              slotMs: config.schedules.paymentIntentsMs,
              sweepPageSize: pageSize,
              ...(FULL_FORM_SHARE === undefined ? {} : { fullFormShare: FULL_FORM_SHARE }),
            },
          ),
        stop.signal,
        intentPasses,
      ),
      onSchedule(config.schedules.alertsMs, () => runAlertsPass(deps), stop.signal, []),
    ];
    // Let the pipeline discover all N (a list round past them) before the first payment.
    const readyStarted = Date.now();
    for (;;) {
      const ready = await db
        .selectFrom('rewards.payment_intents')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('id', 'in', ids)
        .executeTakeFirstOrThrow();
      if (Number(ready.n) >= ids.length || Date.now() - readyStarted > READY_TIMEOUT_MS) break;
      await sleep(250);
    }
    const readySeconds = (Date.now() - readyStarted) / 1000;
    const { rows: depth } = await sql<{ n: string }>`
      select count(*) as n from rewards.payment_intents
      where created_at >= (select min(created_at) from rewards.payment_intents
                           where status = 'pending' and next_poll_at is not null)`.execute(db);
    const depthRows = Number(depth[0]?.n ?? 0);
    const toPay = [...ids].sort(() => Math.random() - 0.5).slice(0, paid);
    const paidAt = new Map<string, number>();
    const started = Date.now();
    await Promise.all(
      toPay.map(async (id) => {
        await sleep(Math.random() * OVER_MS);
        const payment = sim.control.intents.pay(id);
        paidAt.set(id, new Date(payment.paid_at ?? Date.now()).getTime());
      }),
    );
    const drainMs = Math.max(30_000, (5_000 * (0.95 * Math.ceil(open / pageSize))) / allowanceRps);
    const deadline = Date.now() + drainMs;
    while (toPay.some((id) => !deliveries.has(id)) && Date.now() < deadline) await sleep(250);
    const finished = Date.now();
    // Duplicates would arrive after the first: give late ones a moment before counting.
    await sleep(2_000);
    stop.abort();
    await Promise.all(loops);

    const latencies = toPay
      .filter((id) => deliveries.has(id))
      .map((id) => (deliveries.get(id)?.[0] ?? 0) - (paidAt.get(id) ?? 0))
      .sort((a, b) => a - b);
    const duplicates = toPay.reduce((sum, id) => sum + Math.max(0, (deliveries.get(id)?.length ?? 0) - 1), 0);
    const recorded = await db
      .selectFrom('rewards.alerts')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('type', '=', 'payment_intent.paid')
      .where('payment_intent_id', 'in', toPay)
      .executeTakeFirstOrThrow();
    const measured = intentPasses.filter((pass) => pass.at >= started && pass.at < finished);
    const requests = measured.reduce((sum, pass) => sum + (pass.outcome.requests ?? 0), 0);
    const sumOf = (key: string) =>
      measured.reduce((sum, pass) => sum + Number(pass.outcome.details?.[key] ?? 0), 0);
    const beforeFullForm = measured.reduce(
      (sum, pass) => sum + Number(pass.outcome.details?.['alertsBeforeFullForm'] ?? 0),
      0,
    );
    const minutes = (finished - started) / 60_000;
    // A: what the ticks were allowed, per second of tick interval (the one budget may give the
    // intents more than their share while the other streams are idle, as here).
    const allowed = measured.reduce((sum, pass) => sum + Number(pass.outcome.details?.['allowed'] ?? 0), 0);
    const ticks = measured.reduce((sum, pass) => sum + Number(pass.outcome.details?.['ticks'] ?? 0), 0);
    const measuredRps = ticks > 0 ? allowed / ticks / (INTENT_PASS_TUNING.tickEveryMs / 1000) : allowanceRps;
    const boundP95Seconds = (0.95 * Math.ceil(open / pageSize)) / allowanceRps;
    const goalP95Seconds = 1.5 * boundP95Seconds + 0.5;
    const p95 = percentile(latencies, 95) / 1000;
    return {
      allowance: args['pin-share'] ? 'share' : 'one-budget',
      open,
      paid,
      overSeconds: OVER_MS / 1000,
      pageSize,
      alertsReceived: latencies.length,
      duplicates,
      alertsRecorded: Number(recorded.n),
      alertsBeforeFullForm: beforeFullForm,
      p50Seconds: round2(percentile(latencies, 50) / 1000),
      p95Seconds: round2(p95),
      maxSeconds: round2(percentile(latencies, 100) / 1000),
      requestsPerMinute: Math.round(requests / minutes),
      listPagesPerMinute: Math.round(sumOf('pages') / minutes),
      fullFormReadsPerMinute: Math.round(sumOf('fullFormReads') / minutes),
      roundsPerMinute: round2(sumOf('rounds') / minutes),
      depthRows,
      pagesPerRound: Math.ceil(depthRows / pageSize),
      boundRequestsPerMinute: Math.round(allowanceRps * 60),
      boundP95Seconds: round2(boundP95Seconds),
      allowanceRequestsPerMinute: Math.round(measuredRps * 60),
      allowanceBoundP95Seconds: round2((0.95 * Math.ceil(open / pageSize)) / measuredRps),
      goalP95Seconds: round2(goalP95Seconds),
      withinGoal: latencies.length === paid && duplicates === 0 && p95 <= goalP95Seconds,
      readySeconds: round2(readySeconds),
      commit,
      load1: round2(loadavg()[0] ?? 0),
    };
  }
}

await main();
