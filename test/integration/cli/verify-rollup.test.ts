import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { createProcessPool } from '../../helpers/processes.js';
import { TEST_REDIS_URL, testRedisPrefix } from '../../helpers/redis.js';

// `verify` checks check_ins_daily against the rows of the days it verified: a rollup that drifted
// from its rows exits 3 naming the group, and `verify --repair` rebuilds those days.

describe('verify compares check_ins_daily with the rows of the verified days', () => {
  const processes = createProcessPool();
  let sim: RunningSimulator;
  let t: TestDatabase;
  let env: Record<string, string>;
  const HOUR = 3_600_000;
  const anchor = new Date(Math.floor(Date.now() / HOUR) * HOUR);

  beforeAll(async () => {
    sim = await startSimulator({ seed: 29, checkIns: 800, anchor, days: 2 });
    t = await createTestDatabase('verify_rollup');
    env = {
      DATABASE_URL: t.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: testRedisPrefix('verify_rollup'),
      SVC_API_BASE_URL: sim.baseUrl,
      SVC_API_KEY: sim.credentials.apiKey,
      SVC_RATE_LIMIT_RPS: '500',
      CHECKINS_START_AT: new Date(anchor.getTime() - 40 * HOUR).toISOString(),
      CHECKINS_WINDOW: '24h',
      LOG_LEVEL: 'warn',
    };
    const run = await processes.runCli(['run', 'checkins'], { env, timeoutMs: 120_000 });
    expect(run.code, run.stderr).toBe(0);
  }, 180_000);
  afterAll(async () => {
    await processes.cleanup();
    await t?.drop();
    await sim?.close();
  });

  it('a synced warehouse: every verified day matches', async () => {
    const verify = await processes.runCli(['verify'], { env });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    expect(verify.stdout).toMatch(
      /check_ins_daily: [1-9]\d* day\(s\) checked against the rows, 0 group\(s\) differ/,
    );
  });

  it('a drifted group exits 3 naming it; --repair rebuilds the day; verify is clean again', async () => {
    const victim = await t.db
      .selectFrom('rewards.check_ins_daily_rollup')
      .selectAll()
      .orderBy('check_ins', 'desc')
      .executeTakeFirstOrThrow();
    await sql`update rewards.check_ins_daily_rollup set check_ins = check_ins + 1
              where day = ${victim.day} and location_id = ${victim.location_id}`.execute(t.db);
    const drifted = await processes.runCli(['verify'], { env });
    expect(drifted.code).toBe(3);
    expect(drifted.stdout).toContain(
      `location ${victim.location_id}: rollup ${victim.check_ins + 1} check-ins`,
    );
    expect(drifted.stdout).toMatch(/1 group\(s\) differ/);

    const repair = await processes.runCli(['verify', '--repair'], { env });
    expect(repair.code).toBe(3);
    expect(repair.stdout).toMatch(/rebuilt check_ins_daily for /);
    const after = await processes.runCli(['verify'], { env });
    expect(after.code, after.stdout).toBe(0);
  });
});
