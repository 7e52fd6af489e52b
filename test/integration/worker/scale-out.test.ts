import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../../src/simulator/index.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { createProcessPool, type SpawnedProcess } from '../../helpers/processes.js';
import { createTestRedis, deleteRedisPrefix, testRedisPrefix } from '../../helpers/redis.js';
import { apiTotal, checkInWindows, cliEnv, HOUR, pollUntil, windowStatusCounts } from './harness.js';

// The brief's figure was 20 rps, but on this 2-core machine three workers peak at ~17 requests in a
// second with a 20 rps budget, so a broken (per-process) limiter could pass. At 10 the budget binds:
// three unshared limiters would allow 30.
const LIMIT_RPS = 10;
const PAGE_SIZE = 100;
const hour = Math.floor(Date.now() / HOUR) * HOUR;
// 20,000 check-ins over three days (~280 an hour: three pages per 1 h window).
const anchor = new Date(hour - 10 * 60_000);
const backfillFrom = new Date(hour - 73 * HOUR);
const backfillTo = new Date(hour - HOUR);

/** The most requests the simulator received in any 1 s span (sliding, by its request log). */
function busiestSecond(entries: readonly RequestLogEntry[]): number {
  const times = entries.map((entry) => Date.parse(entry.at)).sort((a, b) => a - b);
  let most = 0;
  for (let first = 0, last = 0; last < times.length; last++) {
    while (times[last]! - times[first]! >= 1_000) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

/** Check-in page requests (not page_size=1 count probes) asked more than once with the same bounds and page. */
function repeatedPageRequests(entries: readonly RequestLogEntry[]): string[] {
  const seen = new Map<string, number>();
  for (const entry of entries) {
    if (entry.path !== '/v1/check_ins' || entry.status !== 200 || entry.query.page_size === '1') continue;
    const key = `${entry.query.created_after} ${entry.query.created_before} p${entry.query.page ?? '0'}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return [...seen].filter(([, count]) => count > 1).map(([key, count]) => `${key} x${count}`);
}

describe('three workers on one Redis, one Postgres and one rate-limited API', () => {
  let sim: RunningSimulator;
  let t: TestDatabase;
  const prefix = testRedisPrefix('worker-scale');
  const pool = createProcessPool();

  beforeAll(async () => {
    sim = await startSimulator({ seed: 33, checkIns: 20_000, anchor, days: 3 });
    t = await createTestDatabase('worker_scale');
  });

  afterAll(async () => {
    await pool.cleanup();
    const redis = createTestRedis();
    await deleteRedisPrefix(redis, prefix);
    await redis.quit();
    await t?.drop();
    await sim?.close();
  });

  it('backfills without double work, within the global limit, and loses nothing when one worker stops', async () => {
    const expectedRows = await apiTotal(sim, backfillFrom, new Date());
    const env = cliEnv({
      sim,
      databaseUrl: t.url,
      redisPrefix: prefix,
      env: {
        SVC_RATE_LIMIT_RPS: String(LIMIT_RPS),
        SVC_PAGE_SIZE: String(PAGE_SIZE),
        // The workers' own planner covers only the last hour; the history is the backfill's.
        CHECKINS_START_AT: backfillTo.toISOString(),
        // Hourly windows for the history too: many windows to share among three workers.
        CHECKINS_HISTORY_WINDOW: '1h',
      },
    });
    sim.control.faults.set({ rateLimitRps: LIMIT_RPS });
    sim.control.requests.clear();

    const workers: SpawnedProcess[] = [
      pool.spawnCli(['worker'], { env, label: 'worker-1' }),
      pool.spawnCli(['worker'], { env, label: 'worker-2' }),
      // The one stopped mid-run: a 1 s deadline makes it hand back whatever window it holds.
      pool.spawnCli(['worker', '--shutdown-deadline', '1'], { env, label: 'worker-3' }),
    ];
    await Promise.all(workers.map((worker) => worker.waitForLog('worker started', 45_000)));
    const startedAt = Date.now();

    const backfill = await pool.runCli(
      ['backfill', '--from', backfillFrom.toISOString(), '--to', backfillTo.toISOString()],
      { env },
    );
    expect(backfill.code, backfill.stderr).toBe(0);
    expect(backfill.stdout).toMatch(/planned 72 new window/);

    // Stop one worker while plenty of windows are still to do.
    await pollUntil(
      () => windowStatusCounts(t.db),
      (c) => c.complete >= 15 && c.running >= 2,
      90_000,
      100,
    );
    const stoppedAt = await windowStatusCounts(t.db);
    expect(await workers[2]!.stop('SIGTERM', 30_000)).toEqual({ code: 0, signal: null });

    const done = await pollUntil(
      () => windowStatusCounts(t.db),
      (c) => c.complete >= 74 && c.pending + c.running + c.failed === 0,
      120_000,
      500,
    );
    const wallMs = Date.now() - startedAt;
    expect(done.failed).toBe(0);
    // The workers' planner keeps adding the feed's newest seconds as a window until they stop; one
    // planned after this point may still be pending when they do (run 2 of issue 37's five: a 2 s
    // window). Everything up to here is complete, and that is what verify checks below.
    const { completeUntil } = await t.db
      .selectFrom('rewards.sync_windows')
      .select((eb) => eb.fn.max('window_end').as('completeUntil'))
      .where('status', '=', 'complete')
      .executeTakeFirstOrThrow();
    for (const worker of workers.slice(0, 2))
      expect(await worker.stop('SIGTERM', 45_000), worker.label).toEqual({ code: 0, signal: null });

    const requests = sim.control.requests.list();
    const tooMany = requests.filter((entry) => entry.status === 429).length;
    const busiest = busiestSecond(requests);
    const span = Date.parse(requests.at(-1)!.at) - Date.parse(requests[0]!.at);
    const repeated = repeatedPageRequests(requests);
    const windows = await checkInWindows(t.db);
    const handedOver = windows.filter((w) => w.attempts > 1).length;
    const released = workers[2]!
      .logLines()
      .some((line) => line.msg === 'deadline reached: releasing active jobs');
    const stored = await t.db
      .selectFrom('rewards.check_ins')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    console.info(
      `scale-out: ${windows.length} windows, ${stored.n} rows in ${(wallMs / 1000).toFixed(1)} s; ` +
        `${requests.length} requests over ${(span / 1000).toFixed(1)} s = ${((requests.length * 1000) / span).toFixed(1)} req/s; ` +
        `busiest 1 s: ${busiest}; 429s: ${tooMany}; repeated page requests: ${repeated.length} ${repeated.join(', ')}; ` +
        `one worker stopped at ${stoppedAt.complete} complete windows (released active jobs: ${released}; windows taken over: ${handedOver})`,
    );

    // Nothing lost, nothing twice.
    expect(Number(stored.n)).toBe(expectedRows);
    expect(windows.filter((w) => w.repages > 0)).toEqual([]);
    for (const w of windows)
      expect(w.pages, `${w.window_start.toISOString()} pages`).toBeLessThanOrEqual(
        Math.max(1, Math.ceil(w.rows_seen / PAGE_SIZE)) + 1,
      );
    // Only a page in flight when worker-3 let go may be asked again (at most its concurrency of 2).
    expect(repeated.length).toBeLessThanOrEqual(2);

    // The shared budget held across three processes. The simulator's token bucket (capacity and rate
    // LIMIT_RPS, judged on arrival) is the strict judge: three unshared limiters would draw many 429s.
    expect(tooMany).toBeLessThanOrEqual(2);
    // The request log stamps a request when its answer is ready, not when it arrived, so on a loaded
    // machine answers of evenly spaced requests can bunch by a few: allow the slot edge plus 20 %.
    expect(busiest).toBeLessThanOrEqual(Math.ceil(LIMIT_RPS * 1.2) + 1);

    const verify = await pool.runCli(['verify', '--to', new Date(completeUntil).toISOString()], {
      env,
      timeoutMs: 60_000,
    });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    expect(verify.stdout).toMatch(/ 0 differ/);
  }, 240_000);
});
