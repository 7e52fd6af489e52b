import { Redis } from 'ioredis';
import type { Logger } from '../log.js';

/**
 * A Redis connection for a one-shot command (`status`, `doctor`): it gives up quickly instead of
 * waiting for Redis to come back, and its errors are logged at debug level (the command reports
 * what it could not read). Connect with `connect()`; `lastError()` says why it failed.
 */
export function createOneShotRedis(
  url: string,
  logger: Logger,
): { redis: Redis; lastError: () => Error | undefined } {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2_000,
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => (times > 2 ? null : 200),
  });
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => {
    lastError = error;
    logger.debug({ err: error }, 'redis connection error');
  });
  return { redis, lastError: () => lastError };
}
