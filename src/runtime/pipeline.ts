import { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { createPartnerApi } from '../api/http-partner-api.js';
import type { PartnerApi } from '../api/partner-api.js';
import type { RetrySettings } from '../api/api-requester.js';
import { systemClock, type Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { createMetrics, type PipelineMetrics } from '../metrics.js';
import type { StreamDeps } from '../streams/stream.js';
import { createDatabase } from '../warehouse/database.js';
import type { DB } from '../warehouse/schema.js';
import { bindApiMetrics } from './api-metrics-binding.js';

export interface PipelineRuntime {
  deps: StreamDeps<PartnerApi>;
  db: Kysely<DB>;
  redis: Redis;
  metrics: PipelineMetrics;
  close(): Promise<void>;
}

/**
 * The I/O a process needs to run streams: one Postgres pool, one Redis connection (shared by
 * the rate limiter; BullMQ makes its own), the partner API client and the metrics registry.
 * A caller that already holds a pool or a Redis connection (a test harness, a tool) passes it in;
 * `close()` closes only what this runtime opened.
 */
export function createPipelineRuntime(options: {
  config: Config;
  logger: Logger;
  clock?: Clock;
  metrics?: PipelineMetrics;
  applicationName?: string;
  db?: Kysely<DB>;
  redis?: Redis;
  /** Request retry tuning (tests and tools); production uses the defaults. */
  retry?: Partial<RetrySettings>;
}): PipelineRuntime {
  const { config, logger } = options;
  const metrics = options.metrics ?? createMetrics();
  const db =
    options.db ??
    createDatabase({
      url: config.databaseUrl.reveal(),
      applicationName: options.applicationName ?? 'rewards-etl',
    });
  const redis = options.redis ?? connectRedis(config, logger);
  const api = createPartnerApi({
    config,
    redis,
    db,
    logger,
    metrics: bindApiMetrics(metrics),
    ...(options.retry === undefined ? {} : { retry: options.retry }),
  });
  return {
    deps: { db, redis, api, clock: options.clock ?? systemClock, config, logger, metrics },
    db,
    redis,
    metrics,
    async close() {
      await api.close();
      if (options.db === undefined) await db.destroy();
      if (options.redis === undefined) redis.disconnect();
    },
  };
}

function connectRedis(config: Config, logger: Logger): Redis {
  // maxRetriesPerRequest null: a Redis restart makes commands wait for the reconnect instead of failing.
  const redis = new Redis(config.redisUrl.reveal(), { maxRetriesPerRequest: null });
  redis.on('error', (error: Error) => logger.warn({ err: error }, 'redis connection error'));
  return redis;
}
