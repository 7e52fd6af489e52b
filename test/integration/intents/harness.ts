import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { createPartnerApi } from '../../../src/api/http-partner-api.js';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import { systemClock, type Clock } from '../../../src/clock.js';
import { loadConfig, type Config } from '../../../src/config/config.js';
import { secretValues } from '../../../src/config/secret-values.js';
import { createLogger, type Logger } from '../../../src/log.js';
import { createMetrics } from '../../../src/metrics.js';
import { DEFAULT_ALERT_DELIVERY_POLICY } from '../../../src/alerts/delivery-policy.js';
import { createAlertDeliverySlots } from '../../../src/alerts/delivery-slots.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import type { StreamDeps } from '../../../src/streams/stream.js';
import { createDatabase } from '../../../src/warehouse/database.js';
import type { DB } from '../../../src/warehouse/schema.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { createTestRedis, deleteRedisPrefix, testRedisPrefix } from '../../helpers/redis.js';
import { createTokenStore } from '../../../src/warehouse/oauth-tokens.js';

// One simulator, database, Redis prefix and webhook receiver per test file. "Processes" (deps) are
// built on demand, each with its own database pool, all logging into one captured buffer.

export const WEBHOOK_SECRET = `whsec_${randomBytes(16).toString('hex')}`;

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  rawBody: string;
  receivedAt: number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedRequest[];
  /** Answer this many requests (from now) with `status` before answering 200 again. */
  failNext(count: number, status?: number): void;
  /** Hold every answer this long after its request arrived (0: answer at once). */
  answerAfter(ms: number): void;
  /** Answer nothing until `releaseAnswers` (then each as answerAfter says, counted from its arrival). */
  holdAnswers(): void;
  releaseAnswers(): void;
  /** Requests received and not answered yet; the most there ever were at once; when each answer went out. */
  inFlight(): { now: number; max: number; answeredAt: number[] };
  close(): Promise<void>;
}

export async function startWebhookReceiver(
  onRequest?: (request: ReceivedRequest) => void,
): Promise<WebhookReceiver> {
  const received: ReceivedRequest[] = [];
  let failures = 0;
  let failStatus = 500;
  let delayMs = 0;
  let held: (() => void)[] | null = null;
  const flight = { now: 0, max: 0, answeredAt: [] as number[] };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    flight.now++;
    flight.max = Math.max(flight.max, flight.now);
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        headers: req.headers,
        rawBody: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      };
      received.push(request);
      onRequest?.(request);
      const answer = () => {
        flight.now--;
        flight.answeredAt.push(Date.now());
        if (failures > 0) {
          failures--;
          res.writeHead(failStatus, { 'content-type': 'text/plain' }).end('receiver is down');
        } else {
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
        }
      };
      // A held answer may outlive the server in a test that stops early: nothing to answer then.
      const answerIfOpen = () => {
        if (!res.destroyed) answer();
      };
      const arrivedAt = Date.now();
      const schedule = () => {
        const wait = arrivedAt + delayMs - Date.now();
        if (wait > 0) setTimeout(answerIfOpen, wait);
        else answerIfOpen();
      };
      if (held !== null) held.push(schedule);
      else schedule();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/rewards`,
    received,
    failNext(count, status = 500) {
      failures = count;
      failStatus = status;
    },
    answerAfter(ms) {
      delayMs = ms;
    },
    holdAnswers() {
      held ??= [];
    },
    releaseAnswers() {
      const waiting = held ?? [];
      held = null;
      for (const schedule of waiting) schedule();
    },
    inFlight: () => ({ ...flight, answeredAt: [...flight.answeredAt] }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface IntentHarness {
  sim: RunningSimulator;
  database: TestDatabase;
  receiver: WebhookReceiver;
  env: Record<string, string>;
  logs: string[];
  /** A "process": its own pool, Redis connection and API client. */
  deps(options?: { env?: Record<string, string>; clock?: Clock }): Promise<StreamDeps<PartnerApi>>;
  /** Tells the pipeline the app wallet (what the balance stream would have stored). */
  knowAppWallet(): Promise<void>;
  close(): Promise<void>;
}

export async function createIntentHarness(label: string): Promise<IntentHarness> {
  const sim = await startSimulator({ checkIns: 500, days: 2 });
  const database = await createTestDatabase(label);
  const receiver = await startWebhookReceiver();
  const prefix = testRedisPrefix(label);
  const logs: string[] = [];
  const env: Record<string, string> = {
    DATABASE_URL: database.url,
    REDIS_PREFIX: prefix,
    SVC_API_BASE_URL: sim.baseUrl,
    SVC_API_KEY: sim.credentials.apiKey,
    SVC_OAUTH_CLIENT_ID: sim.credentials.clientId,
    SVC_OAUTH_CLIENT_SECRET: sim.credentials.clientSecret,
    SVC_OAUTH_REFRESH_TOKEN: sim.credentials.refreshToken,
    TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    SVC_RATE_LIMIT_RPS: '200',
    SVC_REQUEST_TIMEOUT: '5s',
    ALERT_WEBHOOK_URL: receiver.url,
    ALERT_WEBHOOK_SECRET: WEBHOOK_SECRET,
    LOG_LEVEL: 'debug',
  };
  const cleanups: (() => Promise<unknown>)[] = [];
  const redisConnections: Redis[] = [];
  return {
    sim,
    database,
    receiver,
    env,
    logs,
    deps(options = {}) {
      const config: Config = loadConfig({ ...env, ...options.env });
      const logger: Logger = createLogger({
        level: 'debug',
        pretty: false,
        secrets: secretValues(config),
        destination: { write: (line: string) => void logs.push(line) },
      });
      const db: Kysely<DB> = createDatabase({ url: database.url, maxConnections: 4 });
      const redis = createTestRedis();
      redisConnections.push(redis);
      const api = createPartnerApi({
        config,
        redis,
        tokenStore: createTokenStore(db),
        logger,
        retry: { retries: 2, maxTotalMs: 10_000, backoff: { baseMs: 20, capMs: 200 } },
      });
      const alertDeliveries = createAlertDeliverySlots({
        concurrency: DEFAULT_ALERT_DELIVERY_POLICY.concurrency,
      });
      cleanups.push(
        () => api.close(),
        () => db.destroy(),
        () => alertDeliveries.close(0),
      );
      return Promise.resolve({
        db,
        redis,
        api,
        clock: options.clock ?? systemClock,
        config,
        logger,
        metrics: createMetrics(),
        alertDeliveries,
      });
    },
    async knowAppWallet() {
      await database.db
        .insertInto('rewards.balance_snapshots')
        .values({
          account_balance_id: sim.credentials.appWalletId,
          observed_at: new Date(),
          owner_id: sim.credentials.merchantId,
          owner_type: 'svc_merchant',
          balance_value: '0',
          balance_currency: 'svc',
        })
        .execute();
    },
    async close() {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
      const first = redisConnections[0];
      if (first) await deleteRedisPrefix(first, prefix);
      for (const redis of redisConnections) redis.disconnect();
      await receiver.close();
      await sim.close();
      await database.drop();
    },
  };
}
