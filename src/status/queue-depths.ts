import { Queue } from 'bullmq';
import type { RedisClient } from '../redis/connection.js';
import { withTimeout } from '../with-timeout.js';
import { ALL_QUEUES } from '../worker/queues.js';
import { parseWorkerRecords, splitByFreshness, workersKey } from '../worker/worker-records.js';
import { QUEUE_STATES, type QueueDepth, type QueuesSummary, type WorkersSummary } from './status-report.js';

const REDIS_TIMEOUT_MS = 2_000;

/** PONG within the timeout, or why not. Never waits on a connection that is already down. */
export async function pingRedis(
  redis: RedisClient,
  timeoutMs = REDIS_TIMEOUT_MS,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  if (redis.status === 'end' || redis.status === 'close' || redis.status === 'reconnecting') {
    return { ok: false, reason: `redis connection is ${redis.status}` };
  }
  try {
    await withTimeout(redis.ping(), timeoutMs, 'redis PING');
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Job counts of every queue, read through the caller's connection (shared: closing the Queue
 * objects leaves it open). `skipMetasUpdate`: looking must not write queue metadata.
 */
export async function readQueueDepths(
  redis: RedisClient | undefined,
  prefix: string,
): Promise<QueuesSummary> {
  if (redis === undefined) return { available: false, reason: 'no Redis connection given', queues: [] };
  const ping = await pingRedis(redis);
  if (!ping.ok) return { available: false, reason: `Redis unreachable: ${ping.reason}`, queues: [] };
  const queues = ALL_QUEUES.map(
    (name) => new Queue(name, { connection: redis, prefix, skipMetasUpdate: true }),
  );
  for (const queue of queues) queue.on('error', () => undefined);
  try {
    const depths = await withTimeout(
      Promise.all(
        queues.map(async (queue): Promise<QueueDepth> => {
          const counts = await queue.getJobCounts(...QUEUE_STATES);
          return {
            queue: queue.name,
            counts: Object.fromEntries(
              QUEUE_STATES.map((state) => [state, counts[state] ?? 0]),
            ) as QueueDepth['counts'],
          };
        }),
      ),
      REDIS_TIMEOUT_MS * 2,
      'redis job counts',
    );
    return { available: true, queues: depths };
  } catch (error) {
    return {
      available: false,
      reason: `Redis unreachable: ${error instanceof Error ? error.message : String(error)}`,
      queues: [],
    };
  } finally {
    await Promise.allSettled(queues.map((queue) => queue.close()));
  }
}

/** The worker processes' self-reports (liveness watchdog), read through the caller's connection. */
export async function readWorkers(
  redis: RedisClient | undefined,
  prefix: string,
  nowMs: number,
): Promise<WorkersSummary> {
  if (redis === undefined)
    return { available: false, reason: 'no Redis connection given', live: [], gone: 0 };
  const ping = await pingRedis(redis);
  if (!ping.ok) return { available: false, reason: `Redis unreachable: ${ping.reason}`, live: [], gone: 0 };
  try {
    const hash = await withTimeout(
      redis.hgetall(workersKey(prefix)),
      REDIS_TIMEOUT_MS,
      'redis worker records',
    );
    const { live, gone } = splitByFreshness(parseWorkerRecords(hash), nowMs);
    return { available: true, live, gone: gone.length };
  } catch (error) {
    return {
      available: false,
      reason: `Redis unreachable: ${error instanceof Error ? error.message : String(error)}`,
      live: [],
      gone: 0,
    };
  }
}
