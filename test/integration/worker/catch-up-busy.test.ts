import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueCatchUp } from '../../../jobs/stream-pass.js';
import { QUEUES } from '../../../src/worker/queues.js';
import { loadConfig } from '../../../src/config/config.js';
import { createLogger } from '../../../src/log.js';
import { streamLease } from '../../../src/leases/lease-names.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { acquireLease } from '../../../src/warehouse/leases.js';
import { startWorker, type RunningWorker } from '../../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { testRedisPrefix } from '../../helpers/redis.js';
import { pollUntil } from './harness.js';
import { JOB_SET } from '../../../jobs/registry.js';

// One retry layer per failure: a busy stream is control flow (TryLaterError → BullMQ's delayed
// state), not a failed attempt of a job with BullMQ retries on top of the HTTP retries.
describe('a catch-up pass that finds its stream busy', () => {
  let sim: RunningSimulator;
  let t: TestDatabase;
  let worker: RunningWorker | undefined;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 9, checkIns: 200, days: 1 });
    t = await createTestDatabase('catchup_busy');
  });
  afterAll(async () => {
    await worker?.stop(5_000);
    await t?.drop();
    await sim?.close();
  });

  it('waits in the delayed state, counts no failed attempt, and runs once the stream is free', async () => {
    // Another host holds the challenges lease, as a long pass would.
    const token = await acquireLease(t.db, {
      name: streamLease('challenges'),
      holder: 'another-host/1',
      hostKey: 'another-host',
      pid: 1,
      ttlMs: 120_000,
    });
    expect(token).not.toBeNull();
    const config = loadConfig({
      DATABASE_URL: t.url,
      REDIS_PREFIX: testRedisPrefix('catchup_busy'),
      SVC_API_BASE_URL: sim.baseUrl,
      SVC_API_KEY: sim.credentials.apiKey,
      SVC_RATE_LIMIT_RPS: '200',
      CHALLENGES_EVERY: '24h',
    });
    worker = await startWorker({
      config,
      logger: createLogger({ level: 'silent', pretty: false }),
      jobs: JOB_SET,
    });
    const queue = worker.queues.get(QUEUES.streams)!;
    await enqueueCatchUp(queue, 'challenges');

    const delayed = await pollUntil(
      async () => {
        const job = await queue.getJob('catchup-challenges');
        return { state: await job?.getState(), data: job?.data as { busyTries?: number } | undefined, job };
      },
      (seen) => seen.state === 'delayed' && (seen.data?.busyTries ?? 0) >= 1,
      30_000,
    );
    expect(delayed.job?.failedReason).toBeFalsy();
    expect(delayed.job?.attemptsMade ?? 0).toBe(0);

    await sql`update rewards.leases set expires_at = now() where name = ${streamLease('challenges')}`.execute(
      t.db,
    );
    const done = await pollUntil(
      async () => (await queue.getJob('catchup-challenges'))?.getState(),
      (state) => state === 'completed',
      60_000,
    );
    expect(done).toBe('completed');
    const runs = await t.db
      .selectFrom('rewards.sync_runs')
      .select(['status'])
      .where('stream', '=', 'challenges')
      .where('status', '=', 'succeeded')
      .execute();
    expect(runs.length).toBeGreaterThanOrEqual(1);
  });
});
