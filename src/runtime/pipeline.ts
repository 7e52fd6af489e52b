import { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { createPartnerApi } from '../api/http-partner-api.js';
import type { PartnerApi } from '../api/partner-api.js';
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
 */
export function createPipelineRuntime(options: {
  config: Config;
  logger: Logger;
  clock?: Clock;
  metrics?: PipelineMetrics;
  applicationName?: string;
}): PipelineRuntime {
  const { config, logger } = options;
  const metrics = options.metrics ?? createMetrics();
  const db = createDatabase({
    url: config.databaseUrl.reveal(),
    applicationName: options.applicationName ?? 'rewards-etl',
  });
  // maxRetriesPerRequest null: a Redis restart makes commands wait for the reconnect instead of failing.
  const redis = new Redis(config.redisUrl.reveal(), { maxRetriesPerRequest: null });
  redis.on('error', (error: Error) => logger.warn({ err: error }, 'redis connection error'));
  const api = createPartnerApi({ config, redis, db, logger, metrics: bindApiMetrics(metrics) });
  return {
    deps: { db, redis, api, clock: options.clock ?? systemClock, config, logger, metrics },
    db,
    redis,
    metrics,
    async close() {
      await api.close();
      await db.destroy();
      redis.disconnect();
    },
  };
}
