import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { createLogger } from '../../../src/log.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { startWorker, type RunningWorker } from '../../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { testRedisPrefix } from '../../helpers/redis.js';
import { JOB_SET } from '../../../jobs/registry.js';

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return check();
}

describe('a fresh worker does not wait for slow schedules to fill what the feed discovered', () => {
  let sim: RunningSimulator;
  let t: TestDatabase;
  let worker: RunningWorker | undefined;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 5, checkIns: 2_000, days: 2 });
    t = await createTestDatabase('catchup');
  });
  afterAll(async () => {
    await worker?.stop(5_000);
    await t?.drop();
    await sim?.close();
  });

  it(
    'locations are refreshed and challenges read on first start, though their schedules are 24 h and 1 h',
    { timeout: 300_000 },
    async () => {
      const config = loadConfig({
        DATABASE_URL: t.url,
        REDIS_PREFIX: testRedisPrefix('catchup'),
        SVC_API_BASE_URL: sim.baseUrl,
        SVC_API_KEY: sim.credentials.apiKey,
        SVC_RATE_LIMIT_RPS: '200',
        CHECKINS_START_AT: new Date(Date.now() - 36 * 3_600_000).toISOString(),
        CHECKINS_EVERY: '2s',
        LOCATIONS_EVERY: '24h',
        CHALLENGES_EVERY: '1h',
        RESTAURANTS_EVERY: '1h',
      });
      worker = await startWorker({
        config,
        logger: createLogger({ level: 'silent', pretty: false }),
        jobs: JOB_SET,
      });
      const refreshed = await until(async () => {
        const row = await t.db
          .selectFrom('rewards.locations')
          .select((eb) => [
            eb.fn.countAll<string>().as('total'),
            eb.fn.count<string>('id').filterWhere('last_refreshed_at', 'is not', null).as('refreshed'),
          ])
          .executeTakeFirstOrThrow();
        return Number(row.total) > 0 && row.total === row.refreshed;
      }, 120_000);
      const runs = await t.db
        .selectFrom('rewards.sync_runs')
        .select(['stream', 'status', 'rows', 'error'])
        .execute();
      expect(refreshed, JSON.stringify(runs)).toBe(true);
      const hours = await t.db.selectFrom('rewards.location_open_hours').select('location_id').execute();
      expect(hours.length).toBeGreaterThan(0);
      const challenges = await until(async () => {
        const row = await t.db
          .selectFrom('rewards.challenges')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow();
        return Number(row.n) > 0;
      }, 120_000);
      const after = await t.db
        .selectFrom('rewards.sync_runs')
        .select(['stream', 'status', 'rows', 'details', 'started_at'])
        .orderBy('started_at')
        .execute();
      expect(challenges, JSON.stringify(after.filter((r) => r.stream !== 'checkins'))).toBe(true);
    },
  );
});
