import { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type { PartnerApi } from '../../src/api/partner-api.js';
import type { Clock } from '../../src/clock.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import { secretValues } from '../../src/config/secret-values.js';
import { createLogger, type Logger } from '../../src/log.js';
import { createPipelineRuntime } from '../../src/runtime/pipeline.js';
import type { RunningSimulator } from '../../src/simulator/index.js';
import type { StreamDeps } from '../../src/streams/stream.js';
import type { DB } from '../../src/warehouse/schema.js';
import { createTestRedis, testRedisPrefix } from './redis.js';

export interface PipelineHarness {
  deps: StreamDeps<PartnerApi>;
  config: Config;
  /** Every log line written so far (JSON), for assertions such as "no secret in the logs". */
  logs(): string;
  close(): Promise<void>;
}

/** Everything a stream pass needs, pointed at a simulator, a test database and a Redis prefix. */
export function createPipelineHarness(options: {
  sim: RunningSimulator;
  db: Kysely<DB>;
  env?: Record<string, string>;
  clock?: Clock;
  redis?: Redis;
  label?: string;
}): PipelineHarness {
  const env = {
    SVC_API_BASE_URL: options.sim.baseUrl,
    SVC_API_KEY: options.sim.credentials.apiKey,
    SVC_RATE_LIMIT_RPS: '1000',
    REDIS_PREFIX: testRedisPrefix(options.label ?? 'pipeline'),
    LOG_LEVEL: 'debug',
    ...options.env,
  };
  const config = loadConfig(env);
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger: Logger = createLogger({
    level: config.logLevel,
    secrets: secretValues(config),
    pretty: false,
    destination,
  });
  const ownRedis = options.redis === undefined;
  const redis = options.redis ?? createTestRedis();
  const runtime = createPipelineRuntime({
    config,
    logger,
    db: options.db,
    redis,
    retry: { backoff: { baseMs: 5, capMs: 50 } },
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  return {
    deps: runtime.deps,
    config,
    logs: () => lines.join(''),
    async close() {
      await runtime.close();
      if (ownRedis) await redis.quit();
    },
  };
}
