// Alert latency: simulator paid_at -> webhook received, with N intents open at once.
//   node --import tsx bench/alert-latency.ts
// Simulator + the real pipeline (API client, shared rate limit at SVC_RATE_LIMIT_RPS=10, Postgres,
// Redis) + a node:http receiver. For each N: open N intents, let the pipeline discover them and read
// their full forms, then pay them at random moments while the payment-intent pass (as the worker runs
// it: ticking within its 5 s slot) and the alerts pass (the fallback) run on their schedules.
// Needs the local Postgres (127.0.0.1:5432, user postgres) and Redis (127.0.0.1:6379).
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { createPartnerApi } from '../src/api/http-partner-api.js';
import type { PartnerApi } from '../src/api/partner-api.js';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { createMetrics } from '../src/metrics.js';
import { DEFAULT_ALERT_DELIVERY_POLICY } from '../src/alerts/delivery-policy.js';
import { createAlertDeliverySlots } from '../src/alerts/delivery-slots.js';
import { createRedisClient } from '../src/redis/connection.js';
import { deleteKeysWithPrefix } from '../src/redis/delete-keys.js';
import { startSimulator } from '../src/simulator/index.js';
import { runAlertsPass } from '../src/streams/alerts.js';
import { runPaymentIntentsPass } from '../src/streams/payment-intents/pass.js';
import type { PassOutcome, StreamDeps } from '../src/streams/stream.js';
import { verifyRewardsSignature } from '../src/alerts/verify-signature.js';
import { createDatabase } from '../src/warehouse/database.js';
import { ensureDatabase, migrateToLatest } from '../src/warehouse/migrate.js';
import { createTokenStore } from '../src/warehouse/oauth-tokens.js';
import { benchLogger } from './lib/bench-logger.js';

/** N open intents; `pay` of them paid at uniformly random moments over `payWindowMs`. */
const SCENARIOS = [
  { open: 100, pay: 100, payWindowMs: 40_000 },
  { open: 1_000, pay: 1_000, payWindowMs: 120_000 },
];
const GOAL = { open: 1_000, p95Ms: 3_000 };
const DRAIN_TIMEOUT_MS = 30_000;
/** How long the pipeline may take to discover N new intents and read their full forms. */
const READY_TIMEOUT_MS = 600_000;
const PG_ADMIN = 'postgres://postgres@127.0.0.1:5432/postgres';

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
  sink: PassOutcome[],
): Promise<void> {
  return (async () => {
    while (!stop.aborted) {
      const started = Date.now();
      try {
        sink.push(await pass());
      } catch (error) {
        console.error('pass failed:', error instanceof Error ? error.message : error);
      }
      const wait = everyMs - (Date.now() - started);
      if (wait > 0) await sleep(wait, undefined, { signal: stop }).catch(() => undefined);
    }
  })();
}

async function main(): Promise<void> {
  const sim = await startSimulator({ checkIns: 200, days: 1 });
  const dbName = `rewards_etl_bench_${randomBytes(4).toString('hex')}`;
  const dbUrl = `postgres://postgres@127.0.0.1:5432/${dbName}`;
  const prefix = `bench-alerts-${randomBytes(4).toString('hex')}`;
  const secret = `whsec_${randomBytes(16).toString('hex')}`;

  const receivedAt = new Map<string, number>();
  let badSignatures = 0;
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const now = Date.now();
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const verdict = verifyRewardsSignature({ rawBody, header: req.headers['rewards-signature'], secret });
      if (!verdict.ok) badSignatures++;
      const body = JSON.parse(rawBody) as { data: { payment_intent: { id: string } } };
      if (!receivedAt.has(body.data.payment_intent.id)) receivedAt.set(body.data.payment_intent.id, now);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const webhookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/alerts`;

  await ensureDatabase(dbUrl);
  const db = createDatabase({ url: dbUrl, maxConnections: 8 });
  await migrateToLatest(db);
  const config = loadConfig({
    DATABASE_URL: dbUrl,
    REDIS_PREFIX: prefix,
    SVC_API_BASE_URL: sim.baseUrl,
    SVC_API_KEY: sim.credentials.apiKey,
    SVC_OAUTH_CLIENT_ID: sim.credentials.clientId,
    SVC_OAUTH_CLIENT_SECRET: sim.credentials.clientSecret,
    SVC_OAUTH_REFRESH_TOKEN: sim.credentials.refreshToken,
    TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    SVC_RATE_LIMIT_RPS: '10',
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

  console.log(
    `alert latency, SVC_RATE_LIMIT_RPS=${config.api.rateLimitRps}, INTENT_POLL_SHARE=${config.intents.pollShare}, ` +
      `passes every ${config.schedules.paymentIntentsMs} ms (intents) / ${config.schedules.alertsMs} ms (alerts)`,
  );
  const rows: string[] = [];
  try {
    for (const scenario of SCENARIOS) {
      const ids = Array.from(
        { length: scenario.open },
        (_, i) => sim.control.intents.create({ amount: '1000', description: `bench ${i}` }).id,
      );
      const stop = new AbortController();
      const intentPasses: PassOutcome[] = [];
      const alertPasses: PassOutcome[] = [];
      const loops = [
        onSchedule(
          config.schedules.paymentIntentsMs,
          () =>
            runPaymentIntentsPass(
              { ...deps, signal: stop.signal },
              { slotMs: config.schedules.paymentIntentsMs },
            ),
          stop.signal,
          intentPasses,
        ),
        onSchedule(config.schedules.alertsMs, () => runAlertsPass(deps), stop.signal, alertPasses),
      ];
      // Let the pipeline discover all N and read their full forms (payer, metadata) before the
      // first payment, as it would for intents opened a while before they are paid.
      const readyStarted = Date.now();
      for (;;) {
        const ready = await db
          .selectFrom('rewards.payment_intents')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('id', 'in', ids)
          .where('payer_account_balance_id', 'is not', null)
          .executeTakeFirstOrThrow();
        if (Number(ready.n) >= ids.length || Date.now() - readyStarted > READY_TIMEOUT_MS) break;
        await sleep(500);
      }
      const readySeconds = (Date.now() - readyStarted) / 1000;
      const passesBefore = intentPasses.length;
      const toPay = [...ids].sort(() => Math.random() - 0.5).slice(0, scenario.pay);
      const paidAt = new Map<string, number>();
      const started = Date.now();
      await Promise.all(
        toPay.map(async (id) => {
          await sleep(Math.random() * scenario.payWindowMs);
          const paid = sim.control.intents.pay(id);
          paidAt.set(id, new Date(paid.paid_at ?? Date.now()).getTime());
        }),
      );
      const deadline = Date.now() + DRAIN_TIMEOUT_MS;
      while (toPay.some((id) => !receivedAt.has(id)) && Date.now() < deadline) await sleep(250);
      stop.abort();
      await Promise.all(loops);

      const latencies = toPay
        .filter((id) => receivedAt.has(id))
        .map((id) => (receivedAt.get(id) ?? 0) - (paidAt.get(id) ?? 0))
        .sort((a, b) => a - b);
      const measured = intentPasses.slice(passesBefore);
      const requests = measured.reduce((sum, pass) => sum + (pass.requests ?? 0), 0);
      const fromList = measured.reduce((sum, pass) => sum + Number(pass.details?.['alertsFromList'] ?? 0), 0);
      const seconds = (Date.now() - started) / 1000;
      const p95 = percentile(latencies, 95);
      const verdict =
        scenario.open === GOAL.open
          ? ` goal p95<=${GOAL.p95Ms / 1000}s: ${p95 <= GOAL.p95Ms && latencies.length === scenario.pay ? 'PASS' : 'MISS'}`
          : '';
      rows.push(
        [
          `open=${String(scenario.open).padStart(5)}`,
          `paid=${scenario.pay} over ${scenario.payWindowMs / 1000}s`,
          `ready in ${readySeconds.toFixed(0)}s`,
          `alerts received=${latencies.length}/${scenario.pay} (${fromList} from the list form)`,
          `p50=${(percentile(latencies, 50) / 1000).toFixed(2)}s`,
          `p95=${(p95 / 1000).toFixed(2)}s`,
          `p99=${(percentile(latencies, 99) / 1000).toFixed(2)}s`,
          `max=${(percentile(latencies, 100) / 1000).toFixed(2)}s`,
          `intent requests=${requests} (${((requests / seconds) * 60).toFixed(0)}/min over ${seconds.toFixed(0)}s)`,
        ].join('  ') + verdict,
      );
      console.log(rows.at(-1));
      // Close what is left open so the next scenario starts with its own N open.
      for (const id of ids) if (!paidAt.has(id)) sim.control.intents.cancel(id);
    }
    if (badSignatures > 0) console.log(`WARNING: ${badSignatures} deliveries failed signature verification`);
  } finally {
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
}

await main();
