import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/clock.js';
import { windowLease } from '../../../src/leases/lease-names.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { runCheckinsPass } from '../../../src/streams/checkins/pass.js';
import { resyncCheckins } from '../../../src/streams/checkins/resync.js';
import type { Window } from '../../../src/sync/windows.js';
import { acquireLease, releaseLease } from '../../../src/warehouse/leases.js';
import { loadWindow } from '../../../src/warehouse/sync-windows.js';
import { windowOf, windowsInRange } from '../../../src/warehouse/sync-window-reads.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { createPipelineHarness, type PipelineHarness } from '../../helpers/pipeline.js';

const HOUR = 3_600_000;
const MINUTE = 60_000;
const anchor = new Date(Math.floor(Date.now() / HOUR) * HOUR - 10 * MINUTE);
const start = new Date(anchor.getTime() - 24 * HOUR);

describe('resync checkins re-pages every window of its range, complete ones too', () => {
  let sim: RunningSimulator;
  let t: TestDatabase;
  let h: PipelineHarness;
  const clock = fixedClock(new Date());
  /** A complete window whose visits have all ended: neither the look-back nor a count sees a correction in it. */
  let window: Window;
  let other: Window;
  const rangeOf = (w: Window) => ({ from: w.start, to: w.end });

  beforeAll(async () => {
    sim = await startSimulator({ seed: 31, checkIns: 600, anchor, days: 1 });
    t = await createTestDatabase('resync_checkins');
    h = createPipelineHarness({
      sim,
      db: t.db,
      clock,
      label: 'resync-checkins',
      env: {
        CHECKINS_START_AT: start.toISOString(),
        CHECKINS_WINDOW: '4h',
        SVC_PAGE_SIZE: '50',
        CHECKINS_SAFETY_LAG: '2m',
        CHECKINS_DELETE_CONFIRM_AFTER: '30m',
      },
    });
    expect((await runCheckinsPass(h.deps)).status).toBe('succeeded');
    const candidates: Window[] = [];
    for (const row of await windowsInRange(t.db, {}, ['complete'])) {
      if ((row.api_total_count ?? 0) < 20) continue;
      const ongoing = await t.db
        .selectFrom('rewards.check_ins')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('created_at', '>=', row.window_start)
        .where('created_at', '<', row.window_end)
        .where('ended_at', 'is', null)
        .executeTakeFirstOrThrow();
      if (Number(ongoing.n) === 0) candidates.push(windowOf(row));
    }
    expect(candidates.length).toBeGreaterThanOrEqual(2);
    [window, other] = [candidates[0]!, candidates[1]!];
  });
  afterEach(() => sim.control.faults.reset());
  afterAll(async () => {
    await h?.close();
    await t?.drop();
    await sim?.close();
  });

  const liveRows = (w: Window) =>
    t.db
      .selectFrom('rewards.check_ins')
      .select(['id', 'svc_pay_enabled', 'ended_at', 'deleted_at'])
      .where('created_at', '>=', new Date(w.start))
      .where('created_at', '<', new Date(w.end))
      .orderBy('id')
      .execute();

  it('a correction in a complete window: plain `run` does not see it, `resync checkins --from --to` does', async () => {
    const [target] = await liveRows(window);
    const endedAt = new Date(target!.ended_at!.getTime() + 7 * MINUTE);
    sim.control.checkIns.correct(target!.id, { svcPayEnabled: !target!.svc_pay_enabled, endedAt });

    clock.advance(MINUTE);
    expect((await runCheckinsPass(h.deps)).status).toBe('succeeded');
    const afterRun = (await liveRows(window)).find((r) => r.id === target!.id);
    expect(afterRun).toMatchObject({ svc_pay_enabled: target!.svc_pay_enabled, ended_at: target!.ended_at });

    const otherBefore = await loadWindow(t.db, other);
    clock.advance(MINUTE);
    const outcome = await resyncCheckins(h.deps, { range: rangeOf(window), wait: false });
    expect(outcome).toMatchObject({ status: 'succeeded', details: { windows: 1, repaged: 1, removed: 0 } });
    const afterResync = (await liveRows(window)).find((r) => r.id === target!.id);
    expect(afterResync).toMatchObject({ svc_pay_enabled: !target!.svc_pay_enabled, ended_at: endedAt });
    // Outside the range nothing was read again.
    expect((await loadWindow(t.db, other))?.completed_at).toEqual(otherBefore?.completed_at);
    expect((await loadWindow(t.db, window))?.status).toBe('complete');
  });

  it('an empty answer during a re-sync deletes nothing: rows stay, the drop is only suspected (drop guard)', async () => {
    const before = await liveRows(window);
    clock.advance(MINUTE);
    sim.control.faults.set({ emptyFeedNext: 2 });
    const outcome = await resyncCheckins(h.deps, { range: rangeOf(window), wait: false });
    expect(outcome).toMatchObject({ status: 'succeeded', details: { removed: 0 } });
    const after = await liveRows(window);
    expect(after).toHaveLength(before.length);
    expect(after.filter((r) => r.deleted_at !== null)).toEqual([]);
    expect((await loadWindow(t.db, window))?.drop_suspected_at).not.toBeNull();

    // A later, real re-read finds them all again: the suspicion is cleared.
    sim.control.faults.reset();
    clock.advance(MINUTE);
    await resyncCheckins(h.deps, { range: rangeOf(window), wait: false });
    expect((await loadWindow(t.db, window))?.drop_suspected_at).toBeNull();
  });

  it('a window another process is paging is named as left behind; with --wait it is re-paged once free', async () => {
    const name = windowLease(window);
    const token = (await acquireLease(t.db, { name, holder: 'another-worker', ttlMs: 60_000 }))!;
    const left = await resyncCheckins(h.deps, { range: rangeOf(window), wait: false });
    expect(left.status).toBe('failed');
    expect(left.problems?.join('\n')).toMatch(/another process is paging it/);

    let waited = 0;
    const waiting = resyncCheckins(h.deps, {
      range: rangeOf(window),
      wait: true,
      lockedRetryMs: 50,
      progress: () => {
        waited++;
      },
    });
    // Released while the re-sync waits on it.
    while (waited < 3) await new Promise((resolve) => setTimeout(resolve, 20));
    await releaseLease(t.db, { name, token });
    expect(await waiting).toMatchObject({ status: 'succeeded', details: { repaged: 1 } });
  });

  it('every window overlapping an open range is re-paged, whatever its state', async () => {
    const all = await windowsInRange(t.db, {});
    clock.advance(MINUTE);
    const outcome = await resyncCheckins(h.deps, { range: { from: null, to: null }, wait: false });
    expect(outcome.status).toBe('succeeded');
    expect(outcome.details?.['windows']).toBeGreaterThanOrEqual(all.length);
    for (const row of await windowsInRange(t.db, {})) expect(row.status).toBe('complete');
  });
});
