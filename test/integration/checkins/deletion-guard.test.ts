import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/clock.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { recheckLookback } from '../../../src/streams/checkins/lookback.js';
import { pageWindow } from '../../../src/streams/checkins/page-window.js';
import { runCheckinsPass } from '../../../src/streams/checkins/pass.js';
import { loadWindow } from '../../../src/warehouse/sync-windows.js';
import { windowOf, windowsInRange } from '../../../src/warehouse/sync-window-reads.js';
import type { Window } from '../../../src/sync/windows.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { createPipelineHarness, type PipelineHarness } from '../../helpers/pipeline.js';

const HOUR = 3_600_000;
const MINUTE = 60_000;
const anchor = new Date(Math.floor(Date.now() / HOUR) * HOUR - 10 * MINUTE);
const start = new Date(anchor.getTime() - 20 * HOUR);

describe('check-ins are never deleted on one read', () => {
  let sim: RunningSimulator;
  let t: TestDatabase;
  let h: PipelineHarness;
  const clock = fixedClock(new Date());
  let window: Window;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 21, checkIns: 400, anchor, days: 1 });
    t = await createTestDatabase('deletion_guard');
    h = createPipelineHarness({
      sim,
      db: t.db,
      clock,
      label: 'deletion-guard',
      env: {
        CHECKINS_START_AT: start.toISOString(),
        CHECKINS_WINDOW: '6h',
        SVC_PAGE_SIZE: '50',
        CHECKINS_SAFETY_LAG: '2m',
        CHECKINS_DELETE_CONFIRM_AFTER: '30m',
      },
    });
    expect((await runCheckinsPass(h.deps)).status).toBe('succeeded');
    const windows = await windowsInRange(t.db, {}, ['complete']);
    const withRows = windows.find((w) => (w.api_total_count ?? 0) > 20);
    window = windowOf(withRows!);
  });
  afterEach(() => sim.control.faults.reset());
  afterAll(async () => {
    await h?.close();
    await t?.drop();
    await sim?.close();
  });

  const rowsOf = () =>
    t.db
      .selectFrom('rewards.check_ins')
      .select(['id', 'deleted_at', 'first_seen_at'])
      .where('created_at', '>=', new Date(window.start))
      .where('created_at', '<', new Date(window.end))
      .execute();

  it('an empty answer for a window that held rows marks nothing: the drop is only suspected', async () => {
    const before = await rowsOf();
    expect(before.length).toBeGreaterThan(20);
    clock.advance(MINUTE);
    // `check_ins: []`, total_count 0 for the page and for the count asked to confirm it
    sim.control.faults.set({ emptyFeedNext: 2 });
    const outcome = await pageWindow(h.deps, window, { force: true });
    expect(outcome).toMatchObject({ status: 'complete', removed: 0 });
    const after = await rowsOf();
    expect(after.filter((r) => r.deleted_at !== null)).toEqual([]);
    expect(after).toHaveLength(before.length);
    expect((await loadWindow(t.db, window))?.drop_suspected_at).not.toBeNull();
  });

  it('a second empty read sooner than CHECKINS_DELETE_CONFIRM_AFTER still marks nothing', async () => {
    clock.advance(10 * MINUTE);
    sim.control.faults.set({ emptyFeedNext: 2 });
    await pageWindow(h.deps, window, { force: true });
    expect((await rowsOf()).filter((r) => r.deleted_at !== null)).toEqual([]);
  });

  it('the look-back reads a suspected window again once the delay has passed, wherever it lies', async () => {
    clock.advance(25 * MINUTE);
    const lookback = await recheckLookback(h.deps);
    expect(lookback.repaged).toBeGreaterThanOrEqual(1);
    const row = await loadWindow(t.db, window);
    expect(row?.status).toBe('pending');
    expect(row?.last_error).toMatch(/confirming a suspected drop/);
  });

  it('a drop confirmed by a read at least the delay later marks the rows deleted_at, keeping them and their first_seen_at', async () => {
    const before = await rowsOf();
    sim.control.faults.set({ emptyFeedNext: 2 });
    const outcome = await pageWindow(h.deps, window);
    expect(outcome.status).toBe('complete');
    const after = await rowsOf();
    expect(after).toHaveLength(before.length);
    expect(after.every((r) => r.deleted_at !== null)).toBe(true);
    expect(after.map((r) => r.first_seen_at.getTime())).toEqual(before.map((r) => r.first_seen_at.getTime()));
    const daily = await t.db
      .selectFrom('rewards.check_ins_daily')
      .select((eb) => eb.fn.sum<string>('check_ins').as('n'))
      .executeTakeFirstOrThrow();
    const live = await t.db
      .selectFrom('rewards.check_ins')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    expect(Number(daily.n)).toBe(Number(live.n)); // the view counts live rows only
  });

  it('rows seen again are live again, and the suspicion is cleared', async () => {
    clock.advance(MINUTE);
    await pageWindow(h.deps, window, { force: true });
    expect((await rowsOf()).filter((r) => r.deleted_at !== null)).toEqual([]);
    expect((await loadWindow(t.db, window))?.drop_suspected_at).toBeNull();
  });

  it('a foreground run re-checks the whole look-back: a late arrival inserted just now is picked up', async () => {
    clock.advance(MINUTE);
    expect((await runCheckinsPass(h.deps)).status).toBe('succeeded');
    // Inside the look-back, in a window checked a minute ago (CHECKINS_LOOKBACK_EVERY is 15 min).
    const [late] = sim.control.checkIns.addLate(1, {
      from: new Date(window.start),
      to: new Date(window.start + HOUR),
    });
    clock.advance(MINUTE);
    expect((await runCheckinsPass(h.deps)).status).toBe('succeeded');
    const row = await t.db
      .selectFrom('rewards.check_ins')
      .select('id')
      .where('id', '=', late!)
      .executeTakeFirst();
    expect(row?.id).toBe(late);
  });
});
