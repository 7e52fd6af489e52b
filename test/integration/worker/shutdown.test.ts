import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { windowKey } from '../../../src/sync/windows.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { createProcessPool } from '../../helpers/processes.js';
import { createTestRedis, deleteRedisPrefix, testRedisPrefix } from '../../helpers/redis.js';
import { apiTotal, checkInWindows, cliEnv, HOUR, pollUntil, windowStatusCounts } from './harness.js';

const hour = Math.floor(Date.now() / HOUR) * HOUR;
// ~830 check-ins an hour, 9 pages of 100 per window: with the latency fault a window takes seconds.
const anchor = new Date(hour - 10 * 60_000);
const startAt = new Date(hour - 3 * HOUR);

describe('worker shutdown (SIGTERM) while paging a window', () => {
  let sim: RunningSimulator;
  const pool = createProcessPool();
  const cleanups: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    sim = await startSimulator({ seed: 21, checkIns: 20_000, anchor, days: 1 });
    // The simulator's visits follow the venues' local day (quiet nights and mornings), so at some
    // hours these windows would hold a page or two: 900 more visits an hour keep every window at
    // 9 pages or more whatever the time of day.
    for (let start = startAt.getTime(); start < hour; start += HOUR) {
      sim.control.checkIns.addLate(900, { from: new Date(start), to: new Date(start + HOUR) });
    }
  });

  afterEach(async () => {
    await pool.cleanup();
    sim.control.faults.reset();
  });

  afterAll(async () => {
    await pool.cleanup();
    for (const cleanup of cleanups.splice(0)) await cleanup();
    await sim?.close();
  });

  /** A database and Redis prefix of its own for one test, dropped at the end of the file. */
  async function fixture(label: string) {
    const t: TestDatabase = await createTestDatabase(`worker_${label}`);
    const prefix = testRedisPrefix(`worker-${label}`);
    cleanups.push(async () => {
      const redis = createTestRedis();
      await deleteRedisPrefix(redis, prefix);
      await redis.quit();
      await t.drop();
    });
    const env = cliEnv({
      sim,
      databaseUrl: t.url,
      redisPrefix: prefix,
      env: { CHECKINS_START_AT: startAt.toISOString() },
    });
    return { t, env };
  }

  /**
   * The first window some worker holds with at least one page recorded and at most `maxPages`
   * (so that, on a busy machine where this poll runs late, it still has pages left to page).
   */
  async function windowBeingPaged(t: TestDatabase, maxPages = Number.POSITIVE_INFINITY) {
    const paging = (w: Awaited<ReturnType<typeof checkInWindows>>[number]) =>
      w.status === 'running' && w.pages > 0 && w.pages <= maxPages;
    const rows = await pollUntil(
      () => checkInWindows(t.db),
      (windows) => windows.some(paging),
      45_000,
    );
    return rows.find(paging)!;
  }

  // Each test's timeout is the sum of the bounded waits it makes (vitest's default 60 s was less
  // than that, and a machine shared 6-7 times over used it up: issue 37's runs).
  const FINISH_AND_VERIFY_BOUND_MS = 30_000 + 60_000 + 45_000 + 60_000;

  /** A second worker finishes every window; then `verify` must find the warehouse equal to the API. */
  async function finishAndVerify(t: TestDatabase, env: Record<string, string>, timeoutMs = 60_000) {
    sim.control.faults.set({ latencyMs: 0 });
    const worker = pool.spawnCli(['worker'], { env, label: 'worker-2' });
    await worker.waitForLog('worker started', 30_000);
    const counts = await pollUntil(
      () => windowStatusCounts(t.db),
      (c) => c.complete >= 4 && c.pending + c.running + c.failed === 0,
      timeoutMs,
      500,
    );
    expect(counts.failed).toBe(0);
    expect(await worker.stop('SIGTERM', 45_000)).toEqual({ code: 0, signal: null });

    // Only the windows the wait above saw complete: the planner may have added a tail window since
    // (real time moves on), and verify rightly reports a window that is not complete yet.
    const windows = (await checkInWindows(t.db)).filter((w) => w.status === 'complete');
    const from = windows[0]!.window_start;
    const to = windows.at(-1)!.window_end;
    const stored = await t.db
      .selectFrom('rewards.check_ins')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('created_at', '>=', from)
      .where('created_at', '<', to)
      .executeTakeFirstOrThrow();
    expect(Number(stored.n)).toBe(await apiTotal(sim, from, to));

    const range = ['--from', from.toISOString(), '--to', to.toISOString()];
    const verify = await pool.runCli(['verify', ...range], { env, timeoutMs: 60_000 });
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stdout).toMatch(/ 0 differ/);
  }

  it(
    'finishes the active window (or hands it back) and exits 0; a second worker completes the range',
    async () => {
      const { t, env } = await fixture('sigterm');
      sim.control.faults.set({ latencyMs: 300 });
      const worker = pool.spawnCli(['worker'], { env, label: 'worker-1' });
      await worker.waitForLog('worker started', 30_000);
      const held = await windowBeingPaged(t);

      const exit = await worker.stop('SIGTERM', 60_000);
      expect(exit, worker.stderr()).toEqual({ code: 0, signal: null });
      expect(worker.logLines().some((line) => line.msg === 'stopped')).toBe(true);

      const after = await checkInWindows(t.db);
      // Nobody holds a window any more, so none may say it is running.
      expect(after.filter((w) => w.status === 'running')).toEqual([]);
      const same = after.find((w) => w.window_start.getTime() === held.window_start.getTime())!;
      expect(
        ['complete', 'pending'],
        windowKey({ start: same.window_start.getTime(), end: same.window_end.getTime() }),
      ).toContain(same.status);
      // Its progress is kept: pages only grow; a window handed back keeps its checkpoint.
      expect(same.pages).toBeGreaterThanOrEqual(held.pages);
      if (same.status === 'pending') expect(same.cursor_before).not.toBeNull();

      await finishAndVerify(t, env);
    },
    30_000 + 45_000 + 60_000 + FINISH_AND_VERIFY_BOUND_MS,
  );

  it(
    '--shutdown-deadline 1 releases a long window (pending, checkpoint kept) and exits 0',
    async () => {
      const { t, env } = await fixture('deadline');
      // 9 pages at 3 s each: far longer than the 1 s deadline, and taken while 5 or more pages are
      // left (a window seen late, on its last page, could rightly finish within the deadline).
      sim.control.faults.set({ latencyMs: 3_000 });
      const worker = pool.spawnCli(['worker', '--shutdown-deadline', '1'], { env, label: 'worker-1' });
      await worker.waitForLog('worker started', 30_000);
      const held = await windowBeingPaged(t, 4);

      const exit = await worker.stop('SIGTERM', 30_000);
      expect(exit, worker.stderr()).toEqual({ code: 0, signal: null });
      expect(worker.logLines().some((line) => line.msg === 'deadline reached: releasing active jobs')).toBe(
        true,
      );

      const after = await checkInWindows(t.db);
      expect(after.filter((w) => w.status === 'running')).toEqual([]);
      const same = after.find((w) => w.window_start.getTime() === held.window_start.getTime())!;
      expect(same.status).toBe('pending');
      expect(same.pages).toBeGreaterThanOrEqual(held.pages);
      expect(same.cursor_before).not.toBeNull();
      expect(same.cursor_before!.getTime()).toBeLessThan(same.window_end.getTime());

      await finishAndVerify(t, env);
    },
    30_000 + 45_000 + 30_000 + FINISH_AND_VERIFY_BOUND_MS,
  );

  it('a worker killed (SIGKILL) mid-window loses nothing: the window is taken over once its lease expires', async () => {
    const { t, env } = await fixture('sigkill');
    sim.control.faults.set({ latencyMs: 1_500 });
    const worker = pool.spawnCli(['worker'], { env, label: 'worker-1' });
    await worker.waitForLog('worker started', 30_000);
    const held = await windowBeingPaged(t);
    expect(await worker.stop('SIGKILL', 10_000)).toEqual({ code: null, signal: 'SIGKILL' });

    // No holder, yet 'running': once its lease expires (LEASE_TTL) the window is due and the next worker resumes it.
    const orphan = (await checkInWindows(t.db)).find(
      (w) => w.window_start.getTime() === held.window_start.getTime(),
    )!;
    expect(orphan.status).toBe('running');
    expect(orphan.cursor_before).not.toBeNull();

    await finishAndVerify(t, env, 150_000);
    const taken = (await checkInWindows(t.db)).find(
      (w) => w.window_start.getTime() === held.window_start.getTime(),
    )!;
    expect(taken.status).toBe('complete');
    expect(taken.attempts).toBeGreaterThanOrEqual(2);
  }, 240_000);
});
