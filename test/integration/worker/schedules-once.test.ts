import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { createLogger } from '../../../src/log.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { createQueues, registerSchedules } from '../../../src/worker/queue-setup.js';
import { startWorker, type RunningWorker } from '../../../src/worker/worker.js';
import { stallGraceMs } from '../../../src/worker/schedule-health.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { createTestRedis, deleteRedisPrefix, testRedisPrefix } from '../../helpers/redis.js';
import { cliEnv } from './harness.js';
import { JOB_SET } from '../../../jobs/registry.js';

const MINUTE = 60_000;

/** What the configuration below must produce: scheduler id → queue and interval (ms). */
function expectedSchedules(balanceMs: number): Record<string, { queue: string; every: number }> {
  return {
    'checkins-plan': { queue: 'checkins-plan', every: 2_000 },
    'stream-restaurants': { queue: 'streams', every: 61 * MINUTE },
    'stream-challenges': { queue: 'streams', every: 62 * MINUTE },
    'stream-locations': { queue: 'streams', every: 63 * MINUTE },
    'stream-balance': { queue: 'streams', every: balanceMs },
    'stream-alerts': { queue: 'streams', every: 7_000 },
  };
}

/** Every scheduler of every queue, as `queue/id` → interval; a duplicate id would show up twice in `seen`. */
async function listSchedulers(queues: Map<string, Queue>) {
  const seen: string[] = [];
  const every = new Map<string, number | undefined>();
  for (const [name, queue] of queues) {
    for (const scheduler of await queue.getJobSchedulers(0, -1)) {
      const id = scheduler.id ?? scheduler.key;
      seen.push(`${name}/${id}`);
      every.set(id, scheduler.every);
    }
  }
  return { seen: seen.sort(), every };
}

/** Jobs waiting for their scheduler's next run, per scheduler: one each, never two. */
async function pendingIterations(queues: Map<string, Queue>): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const queue of queues.values()) {
    for (const job of await queue.getJobs(['delayed', 'waiting', 'prioritized'])) {
      if (job.repeatJobKey !== undefined) counts[job.repeatJobKey] = (counts[job.repeatJobKey] ?? 0) + 1;
    }
  }
  return counts;
}

describe('job schedules registered by several workers on one Redis', () => {
  let sim: RunningSimulator;
  let t: TestDatabase;
  const prefix = testRedisPrefix('worker-schedules');
  const logger = createLogger({ level: 'silent', pretty: false });
  const running: RunningWorker[] = [];
  // Our own view of the queues, on our own connection: it outlives every worker.
  let redis: Redis;
  let queues: ReturnType<typeof createQueues>;

  const configWith = (env: Record<string, string>) =>
    loadConfig(
      cliEnv({
        sim,
        databaseUrl: t.url,
        redisPrefix: prefix,
        // A short check-in history: these workers really run their jobs against the simulator. Every
        // interval is set here, so the expectations do not depend on the defaults in src/config.ts.
        env: {
          CHECKINS_START_AT: new Date(Date.now() - 30 * MINUTE).toISOString(),
          CHECKINS_EVERY: '2s',
          RESTAURANTS_EVERY: '61m',
          CHALLENGES_EVERY: '62m',
          LOCATIONS_EVERY: '63m',
          ALERTS_EVERY: '7s',
          LOG_LEVEL: 'silent',
          ...env,
        },
      }),
    );
  const start = async (env: Record<string, string>) => {
    const worker = await startWorker({ config: configWith(env), logger, jobs: JOB_SET });
    running.push(worker);
    return worker;
  };
  const stopAll = async () => {
    await Promise.all(running.splice(0).map((worker) => worker.stop(5_000)));
  };

  beforeAll(async () => {
    sim = await startSimulator({ seed: 11, checkIns: 500, days: 1 });
    t = await createTestDatabase('worker_schedules');
    redis = createTestRedis();
    queues = createQueues(configWith({}), redis);
  });

  afterAll(async () => {
    await stopAll();
    await Promise.all([...(queues?.values() ?? [])].map((queue) => queue.close()));
    await deleteRedisPrefix(redis, prefix);
    await redis.quit();
    await t?.drop();
    await sim?.close();
  });

  it('two workers starting together register each scheduler exactly once, with the configured interval', async () => {
    await Promise.all([start({ BALANCE_EVERY: '5m' }), start({ BALANCE_EVERY: '5m' })]);
    const expected = expectedSchedules(5 * MINUTE);
    const { seen, every } = await listSchedulers(queues);
    expect(seen).toEqual(
      Object.entries(expected)
        .map(([id, { queue }]) => `${queue}/${id}`)
        .sort(),
    );
    for (const [id, { every: ms }] of Object.entries(expected)) expect(every.get(id), id).toBe(ms);

    await stopAll();
    const iterations = await pendingIterations(queues);
    for (const [id, count] of Object.entries(iterations)) expect(count, id).toBeLessThanOrEqual(1);
  });

  it('a restart with a changed interval updates the scheduler instead of adding another', async () => {
    await start({ BALANCE_EVERY: '7m' });
    const expected = expectedSchedules(7 * MINUTE);
    const { seen, every } = await listSchedulers(queues);
    expect(seen).toEqual(
      Object.entries(expected)
        .map(([id, { queue }]) => `${queue}/${id}`)
        .sort(),
    );
    expect(every.get('stream-balance')).toBe(7 * MINUTE);
    for (const [id, { every: ms }] of Object.entries(expected)) expect(every.get(id), id).toBe(ms);

    // A second process with the new interval joining later changes nothing.
    await start({ BALANCE_EVERY: '7m' });
    expect((await listSchedulers(queues)).seen).toEqual(seen);

    await stopAll();
    const iterations = await pendingIterations(queues);
    expect(Object.keys(iterations).length).toBeGreaterThan(0);
    for (const [id, count] of Object.entries(iterations)) expect(count, id).toBeLessThanOrEqual(1);
  });

  it('a scheduler whose next job a failover lost is put back; healthy ones are left alone', async () => {
    await start({ BALANCE_EVERY: '7m' });
    await stopAll();
    const config = configWith({ BALANCE_EVERY: '7m' });
    const streams = queues.get('streams')!;
    expect(await registerSchedules(config, queues, JOB_SET, { onlyRepair: true })).toEqual([]);

    // What an unreplicated write lost on a promoted replica: the delayed next job, scheduler kept.
    const scheduler = await streams.getJobScheduler('stream-restaurants');
    const next = scheduler!.next!;
    const jobId = `repeat:stream-restaurants:${next}`;
    expect(await streams.getJobState(jobId)).toBe('delayed');
    await redis.zrem(`${prefix}:streams:delayed`, jobId);
    await redis.del(`${prefix}:streams:${jobId}`);
    expect(await streams.getJobState(jobId)).toBe('unknown');

    // Within the grace nothing is touched (a worker may be between taking a job and adding the next).
    expect(await registerSchedules(config, queues, JOB_SET, { onlyRepair: true, now: () => next })).toEqual(
      [],
    );
    const later = () => next + stallGraceMs(61 * MINUTE) + 1;
    expect(await registerSchedules(config, queues, JOB_SET, { onlyRepair: true, now: later })).toEqual([
      'stream-restaurants',
    ]);
    const iterations = await pendingIterations(queues);
    expect(iterations['stream-restaurants']).toBe(1);
    expect((await streams.getJobScheduler('stream-restaurants'))!.next).toBeGreaterThan(next);
  });
});
