import { Queue } from 'bullmq';
import { ALL_QUEUES, JOB_OPTIONS, type QueueName } from './queues.js';
import type { JobSet } from './job-definition.js';
import type { Config } from '../config/config.js';
import type { RedisClient } from '../redis/connection.js';
import { scheduleHealth } from './schedule-health.js';

// The queues a process opens and the Job Schedulers every process registers alike.

export function createQueues(config: Config, connection: RedisClient): Map<QueueName, Queue> {
  return new Map(ALL_QUEUES.map((name) => [name, createQueue(config, connection, name)]));
}

/** One queue, for a command that hands work to the workers (the caller closes it). */
export function createQueue(config: Config, connection: RedisClient, name: QueueName): Queue {
  const queue = new Queue(name, { connection, prefix: config.redisPrefix });
  // Without a listener BullMQ prints each connection error raw (multi-line, not JSON) on stderr;
  // the shared client already logs it once as a JSON line (src/redis/connection.ts).
  queue.on('error', () => undefined);
  return queue;
}

/**
 * Registers every Job Scheduler from configuration. Idempotent: upsert by id, same in every process.
 * With `onlyRepair`, only schedulers that will not fire again are upserted: one Redis no longer has
 * (a restart without persistence), or one whose next job a failover lost (see schedule-health.ts);
 * re-upserting a healthy one could move its next run. Returns the ids upserted.
 */
export async function registerSchedules(
  config: Config,
  queues: Map<QueueName, Queue>,
  jobSet: JobSet,
  options: { onlyRepair?: boolean; now?: () => number } = {},
): Promise<string[]> {
  const ids: string[] = [];
  for (const job of Object.values(jobSet.jobs)) {
    for (const schedule of job.schedules(config)) {
      const queue = queues.get(job.queue);
      if (queue === undefined) throw new Error(`no queue ${job.queue}`);
      if (options.onlyRepair === true) {
        const scheduler = await queue.getJobScheduler(schedule.id);
        const next = scheduler?.next ?? undefined;
        const nextJobState =
          next === undefined ? 'unknown' : await queue.getJobState(`repeat:${schedule.id}:${next}`);
        const health = scheduleHealth({
          next,
          nextJobState,
          everyMs: schedule.everyMs,
          now: (options.now ?? Date.now)(),
        });
        if (health === 'ok') continue;
      }
      await queue.upsertJobScheduler(
        schedule.id,
        { every: schedule.everyMs },
        { name: job.name, data: schedule.data, opts: JOB_OPTIONS },
      );
      ids.push(schedule.id);
    }
  }
  return ids;
}
