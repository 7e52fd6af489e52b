import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createRedisClient, type RedisClient } from '../../src/redis/connection.js';
import { deleteKeysWithPrefix } from '../../src/redis/delete-keys.js';
import { redisSettingsFrom, type RedisSettings } from '../../src/redis/settings.js';
import { currentRunId } from './test-run.js';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * A key prefix no other test file uses; BullMQ queues and limiters take it as their prefix. It
 * carries the run id (`rtest-r<id>-…`) so a later run can delete what a killed one left.
 */
export function testRedisPrefix(label = 'test'): string {
  const run = currentRunId();
  return `rtest-${run === undefined ? '' : `r${run}-`}${label}-${randomBytes(4).toString('hex')}`;
}

/** The machine's standalone Redis, as the connection factory sees it. */
export function testRedisSettings(prefix = 'rewards-etl'): RedisSettings {
  return redisSettingsFrom({ REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix });
}

/** A long-lived client of the machine's Redis, built by the project's connection factory. */
export function createTestRedis(): Redis {
  const client = createRedisClient(testRedisSettings(), { role: 'long-lived' });
  if (!(client instanceof Redis)) throw new Error('TEST_REDIS_URL must name a standalone server');
  return client;
}

/** Deletes every key under a prefix (SCAN, not KEYS, so a busy Redis is not blocked). */
export async function deleteRedisPrefix(redis: RedisClient, prefix: string): Promise<void> {
  await deleteKeysWithPrefix(redis, prefix);
}
