import { createServer, type Server } from 'node:net';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { DEFAULT_SIMULATOR_PORT } from '../../../src/simulator/default-port.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { freePort } from '../../helpers/free-port.js';
import { createProcessPool, REPO_ROOT } from '../../helpers/processes.js';
import { createTestRedis, deleteRedisPrefix, testRedisPrefix } from '../../helpers/redis.js';
import { apiTotal, cliEnv, HOUR } from '../worker/harness.js';

// The README's path for a newcomer, step by step, as separate processes: `simulator` prints a .env
// that the next steps (`auth url` …) accept as it is, on a port that does not change; `backfill
// --wait` before any `worker` (the README's order) finishes; `demo --help` says what it prints.

const pool = createProcessPool();
afterAll(() => pool.cleanup());

/** The KEY=value lines after "Environment for rewards-etl:", as an env object. */
function printedEnv(banner: string): Record<string, string> {
  const lines = banner.slice(banner.indexOf('Environment for rewards-etl:')).split('\n').slice(1);
  return Object.fromEntries(
    lines
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

describe('rewards-etl simulator for a newcomer', () => {
  it(`listens on ${DEFAULT_SIMULATOR_PORT} by default, the port docker-compose.yml publishes`, async () => {
    const help = await pool.runCli(['simulator', '--help'], { env: {} });
    expect(help.stdout).toMatch(
      new RegExp(
        `--port <n>\\s+port to listen on \\(0: any free port\\) \\(default: ${DEFAULT_SIMULATOR_PORT}\\)`,
      ),
    );
    const compose = readFileSync(`${REPO_ROOT}docker-compose.yml`, 'utf8');
    expect(compose).toContain(`'--port', '${DEFAULT_SIMULATOR_PORT}'`);
  });

  it('prints a complete .env: every setting `auth url` needs, SVC_OAUTH_REDIRECT_URI included, and `auth url` accepts it', async () => {
    const port = await freePort();
    const sim = pool.spawnCli(['simulator', '--port', String(port)], { env: {}, label: 'simulator' });
    try {
      await expect.poll(() => sim.stdout(), { timeout: 30_000 }).toMatch(/^TOKEN_ENCRYPTION_KEY=.+$/m);
      const env = printedEnv(sim.stdout());
      expect(Object.keys(env).sort()).toEqual([
        'SVC_API_BASE_URL',
        'SVC_API_KEY',
        'SVC_OAUTH_CLIENT_ID',
        'SVC_OAUTH_CLIENT_SECRET',
        'SVC_OAUTH_REDIRECT_URI',
        'SVC_OAUTH_REFRESH_TOKEN',
        'TOKEN_ENCRYPTION_KEY',
      ]);
      expect(env['SVC_API_BASE_URL']).toBe(`http://127.0.0.1:${port}/v1`);
      expect(() => loadConfig(env)).not.toThrow();
      const url = await pool.runCli(['auth', 'url'], { env });
      expect(url.code, url.stderr).toBe(0);
      expect(url.stdout).toContain(`redirect_uri=${encodeURIComponent(env['SVC_OAUTH_REDIRECT_URI']!)}`);
    } finally {
      await sim.stop('SIGINT');
    }
  });

  it('a port already in use: exit 1 naming the port and --port, not a stack trace', async () => {
    const holder: Server = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    try {
      const ran = await pool.runCli(['simulator', '--port', String(port)], { env: {}, timeoutMs: 30_000 });
      expect(ran.code).toBe(1);
      expect(ran.stderr).toContain(`port ${port} on 127.0.0.1 is in use`);
      expect(ran.stderr).toContain('--port');
      expect(ran.stderr).not.toMatch(/\n\s+at /);
    } finally {
      holder.close();
    }
  });
});

describe('backfill --wait in the README order (before any worker)', () => {
  const hour = Math.floor(Date.now() / HOUR) * HOUR;
  const anchor = new Date(hour - 10 * 60_000);
  const from = new Date(hour - 30 * HOUR);
  const to = new Date(hour - HOUR);
  let sim: RunningSimulator;
  let t: TestDatabase;
  const prefix = testRedisPrefix('newcomer');

  beforeAll(async () => {
    sim = await startSimulator({ seed: 41, checkIns: 1_500, anchor, days: 1 });
    t = await createTestDatabase('newcomer_backfill');
  });
  afterAll(async () => {
    const redis = createTestRedis();
    await deleteRedisPrefix(redis, prefix);
    await redis.quit();
    await t?.drop();
    await sim?.close();
  });

  const env = () =>
    cliEnv({
      sim,
      databaseUrl: t.url,
      redisPrefix: prefix,
      env: { CHECKINS_START_AT: to.toISOString(), CHECKINS_HISTORY_WINDOW: '4h', LOG_LEVEL: 'warn' },
    });

  it('with no worker running it says so and pages the range itself, then exits 0 with every check-in in', async () => {
    const ran = await pool.runCli(
      ['backfill', '--from', from.toISOString(), '--to', to.toISOString(), '--wait'],
      {
        env: env(),
        timeoutMs: 120_000,
      },
    );
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).toContain('no worker is running on this Redis: paging the range in this process');
    expect(ran.stdout).toMatch(/^backfill done: (\d+)\/\1 windows/m);
    const stored = await t.db
      .selectFrom('rewards.check_ins')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('created_at', '>=', from)
      .where('created_at', '<', to)
      .executeTakeFirstOrThrow();
    expect(Number(stored.n)).toBe(await apiTotal(sim, from, to));
  });

  it('with a worker running it leaves the windows to the workers, as before', async () => {
    const worker = pool.spawnCli(['worker'], { env: { ...env(), LOG_LEVEL: 'info' }, label: 'worker' });
    await worker.waitForLog('worker started', 45_000);
    const earlier = new Date(from.getTime() - 8 * HOUR);
    const ran = await pool.runCli(
      ['backfill', '--from', earlier.toISOString(), '--to', from.toISOString(), '--wait'],
      {
        env: env(),
        timeoutMs: 120_000,
      },
    );
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).not.toContain('paging the range in this process');
    expect(ran.stdout).toMatch(/^backfill done: (\d+)\/\1 windows/m);
    await worker.stop('SIGTERM', 30_000);
  });
});

describe('ALERT_SIGNATURE_SCHEME at start-up', () => {
  it('standard-webhooks with a secret not in the whsec_<base64> form: exit 2 naming ALERT_WEBHOOK_SECRET', async () => {
    const ran = await pool.runCli(['worker'], {
      env: { ALERT_SIGNATURE_SCHEME: 'standard-webhooks', ALERT_WEBHOOK_SECRET: 'not-a-whsec-secret' },
      timeoutMs: 60_000,
    });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain(
      'ALERT_WEBHOOK_SECRET: with ALERT_SIGNATURE_SCHEME=standard-webhooks it must start with whsec_',
    );
    expect(ran.stderr).not.toContain('not-a-whsec-secret');
  });
});

describe('demo --help', () => {
  it('says four analytics answers, the four the demo prints (printAnswers in src/demo/run-demo.ts)', async () => {
    const help = await pool.runCli(['demo', '--help'], { env: {} });
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('a summary and four analytics answers');
  });
});
