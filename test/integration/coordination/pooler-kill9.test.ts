import pg from 'pg';
import { afterAll, beforeAll, describe as vitestDescribe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { listLeases } from '../../../src/warehouse/leases.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { ADVISORY_LOCKS_SQL, startPgBouncer, type RunningPgBouncer } from '../../helpers/pgbouncer.js';
import { missingTools } from '../../helpers/optional-tools.js';
import { ADMIN_URL } from '../../helpers/postgres.js';
import { createProcessPool } from '../../helpers/processes.js';
import { createTestRedis, deleteRedisPrefix, testRedisPrefix } from '../../helpers/redis.js';
import { apiTotal, checkInWindows, cliEnv, HOUR, pollUntil, windowStatusCounts } from '../worker/harness.js';

// The suite is skipped (and named in the run's summary) where Debian's pgbouncer is missing;
// under CI=true that fails instead (test/helpers/optional-tools.ts).
const describe = vitestDescribe.skipIf(missingTools('pgbouncer'));

const hour = Math.floor(Date.now() / HOUR) * HOUR;
const anchor = new Date(hour - 10 * 60_000);
const from = new Date(hour - 8 * HOUR);

// Two workers reach Postgres only through PgBouncer in transaction mode, 4 server connections for
// their 2 × 10 client connections. One is killed with SIGKILL while it pages a window; the other
// resumes it from its checkpoint: at once, since the dead holder ran on this host (on another host
// its lease would expire first: LEASE_TTL, 5 s here).
describe('kill -9 of a worker mid-window, both workers behind PgBouncer (transaction mode, pool 4)', () => {
  let sim: RunningSimulator;
  let t: TestDatabase;
  let bouncer: RunningPgBouncer;
  const prefix = testRedisPrefix('pooler-kill9');
  const pool = createProcessPool();

  beforeAll(async () => {
    sim = await startSimulator({ seed: 2709, checkIns: 6_000, anchor, days: 1 });
    t = await createTestDatabase('pooler_kill9');
    bouncer = await startPgBouncer({ poolMode: 'transaction', poolSize: 4 });
  });

  afterAll(async () => {
    await pool.cleanup();
    const redis = createTestRedis();
    await deleteRedisPrefix(redis, prefix);
    await redis.quit();
    await bouncer?.stop();
    await t?.drop();
    await sim?.close();
  });

  it('the window is resumed from its checkpoint by the other worker; nothing lost or doubled; no lease or lock left held', async () => {
    const env = cliEnv({
      sim,
      databaseUrl: bouncer.url(t.name),
      redisPrefix: prefix,
      env: {
        CHECKINS_START_AT: from.toISOString(),
        CHECKINS_HISTORY_WINDOW: '1h',
        SVC_PAGE_SIZE: '50',
        LEASE_TTL: '5s',
      },
    });
    // Windows of about 5 pages at 500 ms each; one is taken while 3 or more pages are left, so the
    // victim cannot finish it between being seen and being killed.
    sim.control.faults.set({ latencyMs: 500 });
    const victim = pool.spawnCli(['worker'], { env, label: 'worker-victim' });
    const survivor = pool.spawnCli(['worker'], { env, label: 'worker-survivor' });
    await Promise.all([victim, survivor].map((worker) => worker.waitForLog('worker started', 45_000)));

    // A window the victim holds (its lease names the victim's pid) with pages committed.
    const victimHolder = `/${victim.child.pid}`;
    const held = await pollUntil(
      async () => {
        const leases = await listLeases(t.db);
        const windows = await checkInWindows(t.db);
        return windows.find(
          (w) =>
            w.status === 'running' &&
            w.pages > 0 &&
            w.pages <= 2 &&
            leases.some(
              (lease) =>
                lease.live &&
                lease.holder.endsWith(victimHolder) &&
                lease.name === `checkins-window:${w.window_start.getTime()}-${w.window_end.getTime()}`,
            ),
        );
      },
      (found) => found !== undefined,
      60_000,
      100,
    );
    expect(await victim.stop('SIGKILL', 10_000)).toEqual({ code: null, signal: 'SIGKILL' });
    sim.control.faults.set({ latencyMs: 0 });

    const done = await pollUntil(
      () => windowStatusCounts(t.db),
      (c) => c.complete >= 8 && c.pending + c.running + c.failed === 0,
      120_000,
      500,
    );
    expect(done.failed).toBe(0);
    const resumed = (await checkInWindows(t.db)).find(
      (w) => w.window_start.getTime() === held!.window_start.getTime(),
    )!;
    expect(resumed.status).toBe('complete');
    expect(resumed.attempts).toBeGreaterThanOrEqual(2);

    const windows = (await checkInWindows(t.db)).filter((w) => w.status === 'complete');
    const [first, last] = [windows[0]!.window_start, windows.at(-1)!.window_end];
    const verify = await pool.runCli(['verify', '--from', first.toISOString(), '--to', last.toISOString()], {
      env,
      timeoutMs: 60_000,
    });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    const stored = await t.db
      .selectFrom('rewards.check_ins')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('created_at', '>=', first)
      .where('created_at', '<', last)
      .executeTakeFirstOrThrow();
    expect(Number(stored.n)).toBe(await apiTotal(sim, first, last));

    expect(await survivor.stop('SIGTERM', 45_000)).toEqual({ code: 0, signal: null });
    // Every process has exited: the survivor released its leases; a lease the victim took just
    // before its kill lives out its LEASE_TTL and then holds nothing. No advisory lock sits on a
    // pooled server connection.
    const live = (await listLeases(t.db)).filter((lease) => lease.live);
    expect(live.filter((lease) => !lease.holder.endsWith(victimHolder))).toEqual([]);
    await pollUntil(
      async () => (await listLeases(t.db)).filter((lease) => lease.live),
      (left) => left.length === 0,
      10_000,
      200,
    );
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    try {
      expect((await admin.query<{ n: number }>(ADVISORY_LOCKS_SQL, [t.name])).rows[0]?.n).toBe(0);
    } finally {
      await admin.end();
    }
  }, 240_000);
});
