import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix no other test file uses; BullMQ queues and limiters take it as their prefix. */
export function testRedisPrefix(label = 'test'): string {
  return `rtest-${label}-${randomBytes(4).toString('hex')}`;
}

export function createTestRedis(): Redis {
  return new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null, lazyConnect: false });
}

/** Deletes every key under a prefix (SCAN, not KEYS, so a busy Redis is not blocked). */
export async function deleteRedisPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}
