import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { windowLease } from '../../../src/leases/lease-names.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { acquireLease, releaseLease } from '../../../src/warehouse/leases.js';
import { windowOf, windowsInRange } from '../../../src/warehouse/sync-window-reads.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { testRedisPrefix } from '../../helpers/redis.js';

const ROOT = new URL('../../../', import.meta.url).pathname;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI from source as a user would, in its own process. */
function cli(args: string[], env: Record<string, string>): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const HOUR = 3_600_000;
const anchor = new Date(Math.floor(Date.now() / HOUR) * HOUR);

describe('rewards-etl resync', () => {
  let sim: RunningSimulator;
  let t: TestDatabase;
  let env: Record<string, string>;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 12, checkIns: 800, anchor, days: 1 });
    t = await createTestDatabase('resync_cli');
    env = {
      DATABASE_URL: t.url,
      REDIS_PREFIX: testRedisPrefix('resync-cli'),
      SVC_API_BASE_URL: sim.baseUrl,
      SVC_API_KEY: sim.credentials.apiKey,
      SVC_RATE_LIMIT_RPS: '500',
      SVC_PAGE_SIZE: '50',
      CHECKINS_START_AT: new Date(anchor.getTime() - 20 * HOUR).toISOString(),
      CHECKINS_WINDOW: '4h',
    };
  });
  afterAll(async () => {
    await t?.drop();
    await sim?.close();
  });

  // One process each: a usage error must exit 2 whatever else is configured.
  it.each([
    [['resync', 'bogus'], /unknown stream "bogus"; streams: restaurants, checkins, .*members, all/],
    [['resync', 'alerts'], /cannot re-sync alerts: alerts reads nothing from the partner API/],
    [['resync', 'checkins', '--from', 'yesterday'], /--from: "yesterday" is not an ISO 8601 date-time/],
    [
      ['resync', 'checkins', '--from', '2026-11-02T00:00:00Z', '--to', '2026-11-01T00:00:00Z'],
      /--from must be before --to/,
    ],
    [['resync'], /missing required argument/],
    [
      ['resync', 'checkins', '--to', '2999-01-01T00:00:00Z'],
      /--to must be at or before now minus CHECKINS_SAFETY_LAG/,
    ],
    [['resync', 'payment_intents'], /SVC_OAUTH_CLIENT_ID/],
  ] as Array<[string[], RegExp]>)('bad usage exits 2 and says what is wrong: %j', async (args, message) => {
    const ran = await cli(args, env);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(message);
  });

  it('re-pages complete windows of the range: a correction lands, exit 0', async () => {
    expect((await cli(['run', 'checkins'], env)).code).toBe(0);
    const row = (await windowsInRange(t.db, {}, ['complete'])).find((w) => (w.api_total_count ?? 0) > 10)!;
    const target = await t.db
      .selectFrom('rewards.check_ins')
      .select(['id', 'svc_pay_enabled'])
      .where('created_at', '>=', row.window_start)
      .where('created_at', '<', row.window_end)
      .where('ended_at', 'is not', null)
      .limit(1)
      .executeTakeFirstOrThrow();
    sim.control.checkIns.correct(target.id, { svcPayEnabled: !target.svc_pay_enabled });

    const ran = await cli(
      ['resync', 'checkins', '--from', row.window_start.toISOString(), '--to', row.window_end.toISOString()],
      env,
    );
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    expect(ran.stdout).toMatch(/^checkins\s+succeeded .*windows=1 .*repaged=1/m);
    const after = await t.db
      .selectFrom('rewards.check_ins')
      .select('svc_pay_enabled')
      .where('id', '=', target.id)
      .executeTakeFirstOrThrow();
    expect(after.svc_pay_enabled).toBe(!target.svc_pay_enabled);
  });

  it('a window another process holds is data left behind: exit 1 naming it', async () => {
    const row = (await windowsInRange(t.db, {}, ['complete']))[0]!;
    const name = windowLease(windowOf(row));
    const token = (await acquireLease(t.db, { name, holder: 'another-worker', ttlMs: 120_000 }))!;
    try {
      const ran = await cli(
        [
          'resync',
          'checkins',
          '--from',
          row.window_start.toISOString(),
          '--to',
          row.window_end.toISOString(),
        ],
        env,
      );
      expect(ran.code).toBe(1);
      expect(ran.stdout).toContain(
        `window ${row.window_start.toISOString()}..${row.window_end.toISOString()} not re-synced`,
      );
      expect(ran.stderr).toMatch(/not fully re-synced: checkins/);
    } finally {
      await releaseLease(t.db, { name, token });
    }
  });

  it('snapshot streams are read whole, and say so when a range is given', async () => {
    const ran = await cli(
      ['resync', 'restaurants', 'balance', '--from', new Date(anchor.getTime() - HOUR).toISOString()],
      env,
    );
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    expect(ran.stdout).toMatch(
      /note: --from\/--to narrow no named stream; restaurants, balance are read whole/,
    );
    expect(ran.stdout).toMatch(/^restaurants\s+succeeded/m);
    expect(ran.stdout).toMatch(/^balance\s+succeeded/m);
  });
});
