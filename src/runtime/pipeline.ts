import type { Kysely } from 'kysely';
import { DEFAULT_ALERT_DELIVERY_POLICY } from '../alerts/delivery-policy.js';
import { createAlertDeliverySlots } from '../alerts/delivery-slots.js';
import { createPartnerApi } from '../api/http-partner-api.js';
import type { PartnerApi } from '../api/partner-api.js';
import type { RetrySettings } from '../api/api-requester.js';
import { systemClock, type Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../log.js';
import { createMetrics, type PipelineMetrics } from '../metrics.js';
import { createRedisClient, type RedisClient } from '../redis/connection.js';
import type { StreamDeps } from '../streams/stream.js';
import { createDatabase } from '../warehouse/database.js';
import { createPostgresClock, type PostgresClock } from '../warehouse/postgres-clock.js';
import type { DB } from '../warehouse/schema.js';
import { bindApiMetrics } from './api-metrics-binding.js';
import { createTokenStore } from '../warehouse/oauth-tokens.js';

/** How long closing a runtime lets queued background alert deliveries start. */
const BACKGROUND_DELIVERIES_DEADLINE_MS = 15_000;

export interface PipelineRuntime {
  deps: StreamDeps<PartnerApi>;
  db: Kysely<DB>;
  redis: RedisClient;
  metrics: PipelineMetrics;
  /**
   * Resolves once the pipeline's clock is Postgres's (the first offset measurement): what a
   * process awaits before it starts work. At once when the caller passed its own clock.
   */
  clockReady(): Promise<void>;
  close(): Promise<void>;
}

export interface PipelineRuntimeOptions {
  config: Config;
  logger: Logger;
  clock?: Clock;
  metrics?: PipelineMetrics;
  applicationName?: string;
  db?: Kysely<DB>;
  redis?: RedisClient;
  /** Request retry tuning (tests and tools); production uses the defaults. */
  retry?: Partial<RetrySettings>;
}

/** The pool and the Redis connection: the caller's when it passed them, else opened here. */
function openConnections(options: PipelineRuntimeOptions): { db: Kysely<DB>; redis: RedisClient } {
  const { config, logger } = options;
  const db =
    options.db ??
    createDatabase({
      url: config.databaseUrl.reveal(),
      applicationName: options.applicationName ?? 'rewards-etl',
    });
  // maxRetriesPerRequest null (long-lived): a restart or failover makes commands wait, not fail.
  const redis =
    options.redis ??
    createRedisClient(config.redis, {
      role: 'long-lived',
      logger,
      connectionName: options.applicationName ?? 'rewards-etl',
    });
  return { db, redis };
}

/** The pipeline's one clock (src/warehouse/postgres-clock.ts), unless the caller brings its own. */
function startPipelineClock(
  db: Kysely<DB>,
  options: PipelineRuntimeOptions,
): { clock: Clock; postgresClock: PostgresClock | undefined; firstSync: Promise<void> | undefined } {
  const { logger } = options;
  const postgresClock = options.clock === undefined ? createPostgresClock(db, { logger }) : undefined;
  const clock: Clock = options.clock ?? postgresClock ?? systemClock;
  const firstSync = postgresClock?.sync().then(
    () => undefined,
    (error: unknown) => {
      logger.warn(
        { err: error },
        "could not measure the clock offset to Postgres yet; using this host's clock",
      );
    },
  );
  return { clock, postgresClock, firstSync };
}

/**
 * The I/O a process needs to run streams: one Postgres pool, one Redis connection (shared by
 * the rate limiter; BullMQ makes its own), the partner API client, the metrics registry and the
 * pipeline's clock (Postgres's, measured once at start and every minute).
 * A caller that already holds a pool or a Redis connection (a test harness, a tool) passes it in;
 * `close()` closes only what this runtime opened.
 */
export function createPipelineRuntime(options: PipelineRuntimeOptions): PipelineRuntime {
  const { config, logger } = options;
  const metrics = options.metrics ?? createMetrics();
  const { db, redis } = openConnections(options);
  const { clock, postgresClock, firstSync } = startPipelineClock(db, options);
  const api = createPartnerApi({
    config,
    redis,
    tokenStore: createTokenStore(db),
    logger,
    metrics: bindApiMetrics(metrics),
    nowMs: () => clock.now().getTime(),
    ...(options.retry === undefined ? {} : { retry: options.retry }),
  });
  const alertDeliveries = createAlertDeliverySlots({
    concurrency: DEFAULT_ALERT_DELIVERY_POLICY.concurrency,
  });
  return {
    deps: { db, redis, api, clock, config, logger, metrics, alertDeliveries },
    db,
    redis,
    metrics,
    clockReady: async () => {
      await firstSync;
    },
    async close() {
      // Alerts being delivered in the background finish first (each POST has its own timeout);
      // past the deadline, queued ones are left to the alerts pass of whichever process runs next.
      const { notStarted } = await alertDeliveries.close(BACKGROUND_DELIVERIES_DEADLINE_MS);
      if (notStarted > 0)
        logger.info(
          { notStarted },
          'alert deliveries not started before shutdown; the alerts pass sends them',
        );
      postgresClock?.close();
      await api.close();
      if (options.db === undefined) await db.destroy();
      if (options.redis === undefined) redis.disconnect();
    },
  };
}
