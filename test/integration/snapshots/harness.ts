import type { Redis } from 'ioredis';
import type { Page, PageStream, PartnerApi } from '../../../src/api/partner-api.js';
import { createPartnerApi } from '../../../src/api/http-partner-api.js';
import { fixedClock } from '../../../src/clock.js';
import { loadConfig, type Config } from '../../../src/config/config.js';
import { createLogger } from '../../../src/log.js';
import { createMetrics } from '../../../src/metrics.js';
import { DEFAULT_ALERT_DELIVERY_POLICY } from '../../../src/alerts/delivery-policy.js';
import { createAlertDeliverySlots } from '../../../src/alerts/delivery-slots.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import type { PassOutcome, StreamDeps } from '../../../src/streams/stream.js';
import { finishSyncRun, startSyncRun } from '../../../src/warehouse/sync-runs.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { createTestRedis, deleteRedisPrefix, testRedisPrefix } from '../../helpers/redis.js';
import { createTokenStore } from '../../../src/warehouse/oauth-tokens.js';

/** Simulator over real HTTP, a fresh database, real Redis, and the real client: one per test file. */
export interface SnapshotHarness {
  sim: RunningSimulator;
  database: TestDatabase;
  redis: Redis;
  config: Config;
  api: PartnerApi;
  clock: ReturnType<typeof fixedClock>;
  deps(overrides?: Partial<StreamDeps<PartnerApi>>): StreamDeps<PartnerApi>;
  /** Runs a pass inside sync_runs bookkeeping, as the job runner does, and advances the clock a minute. */
  run(
    stream: string,
    pass: (deps: StreamDeps<PartnerApi>) => Promise<PassOutcome>,
    overrides?: Partial<StreamDeps<PartnerApi>>,
  ): Promise<PassOutcome>;
  close(): Promise<void>;
}

export async function startHarness(
  label: string,
  options: { pageSize?: number; anchor?: Date; checkIns?: number } = {},
): Promise<SnapshotHarness> {
  const sim = await startSimulator({
    seed: 7,
    checkIns: options.checkIns ?? 300,
    days: 3,
    ...(options.anchor === undefined ? {} : { anchor: options.anchor }),
  });
  const database = await createTestDatabase(label);
  const redis = createTestRedis();
  const prefix = testRedisPrefix(label);
  const config = loadConfig({
    SVC_API_BASE_URL: sim.baseUrl,
    SVC_API_KEY: sim.credentials.apiKey,
    REDIS_PREFIX: prefix,
    SVC_RATE_LIMIT_RPS: '1000',
    SVC_PAGE_SIZE: String(options.pageSize ?? 5),
    LOG_LEVEL: 'silent',
  });
  const logger = createLogger({ level: 'silent' });
  const api = createPartnerApi({
    config,
    redis,
    tokenStore: createTokenStore(database.db),
    logger,
    retry: { retries: 1, backoff: { baseMs: 5, capMs: 10 } },
  });
  const clock = fixedClock(new Date('2026-03-02T12:00:00Z'));
  const metrics = createMetrics();
  const alertDeliveries = createAlertDeliverySlots({
    concurrency: DEFAULT_ALERT_DELIVERY_POLICY.concurrency,
  });
  const deps = (overrides: Partial<StreamDeps<PartnerApi>> = {}): StreamDeps<PartnerApi> => ({
    db: database.db,
    redis,
    api,
    clock,
    config,
    logger,
    metrics,
    alertDeliveries,
    ...overrides,
  });
  return {
    sim,
    database,
    redis,
    config,
    api,
    clock,
    deps,
    async run(stream, pass, overrides) {
      const runId = await startSyncRun(database.db, stream, clock.now());
      try {
        const outcome = await pass(deps(overrides));
        await finishSyncRun(database.db, runId, { ...outcome, finishedAt: clock.now() });
        return outcome;
      } catch (error) {
        await finishSyncRun(database.db, runId, {
          status: 'failed',
          finishedAt: clock.now(),
          rows: 0,
          error: String(error),
        });
        throw error;
      } finally {
        clock.advance(60_000);
      }
    },
    async close() {
      await api.close();
      await sim.close();
      await deleteRedisPrefix(redis, prefix);
      redis.disconnect();
      await database.drop();
    },
  };
}

/** A page stream whose pages pass through `transform` (to hide, corrupt or stop pages in tests). */
export function mapPages<T>(
  inner: PageStream<T>,
  transform: (page: Page<T>, index: number) => Page<T> | Promise<Page<T>>,
): PageStream<T> {
  return {
    get firstTotalCount() {
      return inner.firstTotalCount;
    },
    get lastTotalCount() {
      return inner.lastTotalCount;
    },
    get pagesFetched() {
      return inner.pagesFetched;
    },
    async *[Symbol.asyncIterator]() {
      let index = 0;
      for await (const page of inner) yield await transform(page, index++);
    },
  };
}
