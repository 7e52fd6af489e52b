import { spawn } from 'node:child_process';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { listLeases } from '../../../src/warehouse/leases.js';
import { createTestDatabase, freshDatabaseUrl, type TestDatabase } from '../../helpers/db.js';
import { testRedisPrefix } from '../../helpers/redis.js';

const ROOT = new URL('../../../', import.meta.url).pathname;

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * How long one CLI process may take. A few seconds on a quiet machine; with the two cores shared
 * 6-7 times over, starting `tsx` alone took 10-14 s (issue 37's runs), so a test that runs the CLI
 * n times is bounded by n of these, not by vitest's default 60 s.
 */
const CLI_BOUND_MS = 90_000;
const boundFor = (cliCalls: number) => cliCalls * CLI_BOUND_MS;

/** Runs the CLI from source as a user would, in its own process; killed and failed after CLI_BOUND_MS. */
function cli(
  args: string[],
  env: Record<string, string>,
  options: { killWhen?: () => Promise<boolean> } = {},
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let watching = options.killWhen !== undefined;
    const watch = async () => {
      while (watching) {
        if (await options.killWhen!()) {
          child.kill('SIGKILL');
          return;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    if (watching) void watch();
    const bound = setTimeout(() => {
      watching = false;
      child.kill('SIGKILL');
      reject(
        new Error(`rewards-etl ${args.join(' ')} did not exit within ${CLI_BOUND_MS / 1000} s:\n${stderr}`),
      );
    }, CLI_BOUND_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      watching = false;
      clearTimeout(bound);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

describe('rewards-etl command line', () => {
  it(
    '--help lists every command of the contract',
    async () => {
      const ran = await cli(['--help'], {});
      expect(ran.code).toBe(0);
      for (const command of [
        'migrate',
        'worker',
        'run',
        'backfill',
        'verify',
        'status',
        'simulator',
        'demo',
        'auth',
      ]) {
        expect(ran.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
      }
    },
    boundFor(1),
  );

  it(
    'a bad setting exits 2 naming the variable',
    async () => {
      const ran = await cli(['run', 'checkins'], { SVC_RATE_LIMIT_RPS: 'abc' });
      expect(ran.code).toBe(2);
      expect(ran.stderr).toContain('SVC_RATE_LIMIT_RPS');
    },
    boundFor(1),
  );

  it(
    'bad usage exits 2',
    async () => {
      expect(
        (await cli(['run', 'bogus'], { SVC_API_BASE_URL: 'http://127.0.0.1:9/v1', SVC_API_KEY: 'k' })).code,
      ).toBe(2);
      expect((await cli(['no-such-command'], {})).code).toBe(2);
      const unmigrated = freshDatabaseUrl('cli_unmigrated');
      for (const command of [['run', 'checkins'], ['status'], ['verify']]) {
        const ran = await cli(command, {
          DATABASE_URL: unmigrated.url,
          SVC_API_BASE_URL: 'http://127.0.0.1:9/v1',
          SVC_API_KEY: 'k',
        });
        expect(ran.code, command.join(' ')).toBe(1);
        expect(ran.stderr, command.join(' ')).toContain('run `rewards-etl migrate` first');
      }
      const missing = await cli(['run', 'checkins'], {});
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('SVC_API_BASE_URL');
    },
    boundFor(3),
  );
});

describe('run, verify and a crash mid-window', () => {
  let sim: RunningSimulator;
  let t: TestDatabase;
  let env: Record<string, string>;
  const HOUR = 3_600_000;
  const anchor = new Date(Math.floor(Date.now() / HOUR) * HOUR);

  beforeAll(async () => {
    sim = await startSimulator({ seed: 11, checkIns: 3_000, anchor, days: 2 });
    t = await createTestDatabase('cli');
    env = {
      DATABASE_URL: t.url,
      REDIS_PREFIX: testRedisPrefix('cli'),
      SVC_API_BASE_URL: sim.baseUrl,
      SVC_API_KEY: sim.credentials.apiKey,
      SVC_RATE_LIMIT_RPS: '500',
      SVC_PAGE_SIZE: '20',
      CHECKINS_START_AT: new Date(anchor.getTime() - 40 * HOUR).toISOString(),
      CHECKINS_WINDOW: '24h',
      CHECKINS_SPLIT_PAGES: '1000',
    };
  });
  afterAll(async () => {
    await t?.drop();
    await sim?.close();
  });

  it(
    'a process killed with SIGKILL mid-window resumes from its checkpoint: no gap, no duplicate',
    async () => {
      sim.control.faults.set({ latencyMs: 40 });
      const firstRun = await cli(['run', 'checkins'], env, {
        killWhen: async () => {
          const row = await t.db
            .selectFrom('rewards.sync_windows')
            .select('pages')
            .where('status', '=', 'running')
            .where('pages', '>=', 5)
            .executeTakeFirst();
          return row !== undefined;
        },
      });
      sim.control.faults.reset();
      expect(firstRun.signal).toBe('SIGKILL');
      // The window the kill waited for: two windows are in flight, and the other may have just
      // started (no page, no checkpoint yet).
      const interrupted = await t.db
        .selectFrom('rewards.sync_windows')
        .selectAll()
        .where('status', '=', 'running')
        .orderBy('pages', 'desc')
        .executeTakeFirstOrThrow();
      expect(interrupted.cursor_before).not.toBeNull();
      const pagesBefore = interrupted.pages;

      // Its leases outlive it (LEASE_TTL, 30 s), but it ran on this host and is gone: the next run
      // takes them over at once.
      expect((await listLeases(t.db)).filter((lease) => lease.live).length).toBeGreaterThan(0);
      const second = await cli(['run', 'checkins'], env);
      expect(second.code, second.stderr).toBe(0);
      const resumed = await t.db
        .selectFrom('rewards.sync_windows')
        .selectAll()
        .where('window_start', '=', interrupted.window_start)
        .executeTakeFirstOrThrow();
      expect(resumed.status).toBe('complete');
      // It went on from the checkpoint, not from the window's first page.
      expect(resumed.repages).toBe(0);
      expect(resumed.pages).toBeGreaterThan(pagesBefore);

      const verify = await cli(['verify'], env);
      expect(verify.code, verify.stdout + verify.stderr).toBe(0);
      expect(verify.stdout).toMatch(/0 differ/);
    },
    boundFor(3),
  );

  it(
    'verify exits 3 after rows are deleted, and --repair plus a pass makes it whole again',
    async () => {
      const victims = await t.db.selectFrom('rewards.check_ins').select('id').limit(5).execute();
      await t.db
        .deleteFrom('rewards.check_ins')
        .where(
          'id',
          'in',
          victims.map((v) => v.id),
        )
        .execute();
      const mismatch = await cli(['verify'], env);
      expect(mismatch.code).toBe(3);
      expect(mismatch.stdout).toContain('MISMATCH');
      const repair = await cli(['verify', '--repair'], env);
      expect(repair.code).toBe(3);
      expect(repair.stdout).toMatch(/re-queued \d+ window/);
      expect((await cli(['run', 'checkins'], env)).code).toBe(0);
      expect((await cli(['verify'], env)).code).toBe(0);
      const back = await t.db
        .selectFrom('rewards.check_ins')
        .select('id')
        .where(
          'id',
          'in',
          victims.map((v) => v.id),
        )
        .execute();
      expect(back).toHaveLength(5);
    },
    boundFor(4),
  );

  it(
    'a run that leaves a window failed exits 1 naming it, and verify exits 3 naming it; fixed, both exit 0',
    async () => {
      const victim = await t.db
        .selectFrom('rewards.check_ins')
        .select(['id', 'created_at'])
        .orderBy('created_at', 'desc')
        .limit(1)
        .executeTakeFirstOrThrow();
      // The warehouse refuses to take this row back (not a data error: the page fails as a whole).
      await sql`
      create function rewards.refuse_victim() returns trigger language plpgsql as $$
      begin
        if new.id = ${sql.lit(victim.id)}::uuid then raise exception 'refused by a test trigger'; end if;
        return new;
      end $$`.execute(t.db);
      await sql`create trigger refuse_victim before insert on rewards.check_ins
      for each row execute function rewards.refuse_victim()`.execute(t.db);
      await t.db.deleteFrom('rewards.check_ins').where('id', '=', victim.id).execute();
      try {
        const run = await cli(['run', 'checkins'], env);
        expect(run.code, run.stderr).toBe(1);
        expect(run.stdout).toMatch(/window \S+\.\.\S+ failed: .*refused by a test trigger/);
        expect(run.stderr).toMatch(/failed or left work undone/);
        const verify = await cli(['verify'], env);
        expect(verify.code).toBe(3);
        expect(verify.stdout).toMatch(/failed: .*refused by a test trigger/);
        expect(verify.stdout).toMatch(/1 not complete/);
      } finally {
        await sql`drop trigger refuse_victim on rewards.check_ins`.execute(t.db);
        await sql`drop function rewards.refuse_victim()`.execute(t.db);
      }
      const fixed = await cli(['run', 'checkins'], env);
      expect(fixed.code, fixed.stdout + fixed.stderr).toBe(0);
      const verified = await cli(['verify'], env);
      expect(verified.code, verified.stdout).toBe(0);
      const back = await t.db
        .selectFrom('rewards.check_ins')
        .select('id')
        .where('id', '=', victim.id)
        .execute();
      expect(back).toHaveLength(1);
    },
    boundFor(4),
  );
});
