import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { freePort } from '../../helpers/free-port.js';
import { createProcessPool, type CliRun } from '../../helpers/processes.js';
import { TEST_REDIS_URL, testRedisPrefix } from '../../helpers/redis.js';

// Issue 40 items 2 and 3: a command that needs Redis or Postgres waits STARTUP_TIMEOUT for it, one
// JSON line per attempt naming the setting and the cause, then exits 1 with one plain line.

const pool = createProcessPool();
let database: TestDatabase;
let deadPort: number;

beforeAll(async () => {
  database = await createTestDatabase('startup_wait');
  deadPort = await freePort();
});
afterAll(async () => {
  await pool.cleanup();
  await database.drop();
});

function env(extra: Record<string, string>): Record<string, string> {
  return {
    DATABASE_URL: database.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: testRedisPrefix('startup_wait'),
    SVC_API_BASE_URL: 'http://127.0.0.1:9/v1',
    SVC_API_KEY: 'k',
    STARTUP_TIMEOUT: '2s',
    LOG_LEVEL: 'info',
    ...extra,
  };
}

/** Every stderr line but the last is one JSON object; the last is the plain `rewards-etl:` line. */
function splitOutput(ran: CliRun): { json: Array<Record<string, unknown>>; plain: string[] } {
  const lines = ran.stderr.split('\n').filter((line) => line !== '');
  const json = lines
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { json, plain: lines.filter((line) => !line.startsWith('{')) };
}

describe('an unreachable Redis or Postgres at start-up is waited for STARTUP_TIMEOUT, named, then exit 1', () => {
  it.each([['worker'], ['run', 'balance']])(
    '`%s` with REDIS_URL on a dead port exits 1 naming REDIS_URL, JSON lines only before it',
    async (...args: string[]) => {
      const ran = await pool.runCli(args, {
        env: env({ REDIS_URL: `redis://127.0.0.1:${deadPort}/5` }),
        timeoutMs: 60_000,
      });
      expect(ran.code).toBe(1);
      const { json, plain } = splitOutput(ran);
      expect(plain).toHaveLength(1);
      expect(plain[0]).toMatch(
        /^rewards-etl: Redis at standalone 127\.0\.0\.1:\d+ unreachable after 2 s \(STARTUP_TIMEOUT\): connect ECONNREFUSED .*check REDIS_URL/,
      );
      const attempts = json.filter((line) => line.setting === 'REDIS_URL');
      expect(attempts.length).toBeGreaterThanOrEqual(2);
      expect(attempts.length).toBeLessThan(10);
      for (const line of attempts) {
        expect(line.cause).toContain('ECONNREFUSED');
        expect(line).not.toHaveProperty('err.stack');
      }
      expect(ran.stderr).not.toContain('    at ');
    },
  );

  it.each([['migrate'], ['status'], ['verify'], ['run', 'balance']])(
    '`%s` with DATABASE_URL on a dead port exits 1 naming DATABASE_URL, no stack',
    async (...args: string[]) => {
      const url = new URL(database.url);
      url.port = String(deadPort);
      const ran = await pool.runCli(args, { env: env({ DATABASE_URL: url.toString() }), timeoutMs: 60_000 });
      expect(ran.code).toBe(1);
      const { json, plain } = splitOutput(ran);
      expect(plain).toEqual([
        expect.stringMatching(
          /^rewards-etl: Postgres at 127\.0\.0\.1:\d+\/\w+ unreachable after 2 s \(STARTUP_TIMEOUT\): connect ECONNREFUSED 127\.0\.0\.1:\d+; check DATABASE_URL/,
        ),
      ]);
      expect(json.filter((line) => line.setting === 'DATABASE_URL').length).toBeGreaterThanOrEqual(2);
      expect(ran.stderr).not.toContain('    at ');
    },
  );

  it('a refused login is not waited for: exit 1 at once naming DATABASE_URL', async () => {
    const url = new URL(database.url);
    url.username = 'no_such_role_i40';
    const ran = await pool.runCli(['migrate'], {
      env: env({ DATABASE_URL: url.toString(), STARTUP_TIMEOUT: '1m' }),
      timeoutMs: 30_000,
    });
    expect(ran.code).toBe(1);
    expect(splitOutput(ran).plain).toEqual([
      expect.stringMatching(
        /^rewards-etl: Postgres at .* refused the connection: .*no_such_role_i40.*check DATABASE_URL/,
      ),
    ]);
  });
});
