import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { runCheckinsPass } from '../../../src/streams/checkins/pass.js';
import { runRestaurantsPass } from '../../../src/streams/restaurants.js';
import { windowsInRange } from '../../../src/warehouse/sync-window-reads.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { createPipelineHarness, type PipelineHarness } from '../../helpers/pipeline.js';

const HOUR = 3_600_000;
const anchor = new Date(Math.floor(Date.now() / HOUR) * HOUR - 10 * 60_000);
const start = new Date(anchor.getTime() - 20 * HOUR);

describe('paging that never ends, page sizes the server does not give, answers too large', () => {
  let sim: RunningSimulator;
  let t: TestDatabase;
  let h: PipelineHarness;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 5, checkIns: 300, anchor, days: 1 });
    t = await createTestDatabase('paging_faults');
    h = createPipelineHarness({
      sim,
      db: t.db,
      label: 'paging-faults',
      env: {
        CHECKINS_START_AT: start.toISOString(),
        CHECKINS_WINDOW: '6h',
        SVC_PAGE_SIZE: '5',
        CHECKINS_SAFETY_LAG: '2m',
        SVC_MAX_RESPONSE_SIZE: '1MB',
      },
    });
  });
  afterEach(() => sim.control.faults.reset());
  afterAll(async () => {
    await h?.close();
    await t?.drop();
    await sim?.close();
  });

  const liveRestaurants = async () =>
    (await t.db.selectFrom('rewards.restaurants').select('id').where('deleted_at', 'is', null).execute())
      .length;

  it('empty pages with next_page = page + 1 forever: paging stops at the first empty page', async () => {
    sim.control.faults.set({ endlessPaging: 'empty-pages' });
    const outcome = await runRestaurantsPass(h.deps);
    expect(outcome.status).toBe('succeeded');
    expect(await liveRestaurants()).toBe(sim.control.restaurants.list().length);
  });

  it('the same page again and again: the pass fails with PagingOverrunError and deletes nothing', async () => {
    const before = await liveRestaurants();
    expect(before).toBeGreaterThan(5);
    sim.control.faults.set({ endlessPaging: 'same-page' });
    const outcome = await runRestaurantsPass(h.deps);
    expect(outcome.status).not.toBe('succeeded');
    expect(outcome.error).toMatch(/paging did not end/);
    const pagesAsked = sim.control.requests.list().filter((r) => r.path === '/v1/restaurants').length;
    expect(pagesAsked).toBeLessThan(50);
    expect(await liveRestaurants()).toBe(before);
  });

  it.each(['zero', 'absent'] as const)(
    'page_size %s in the answer does not split windows: the size asked for applies',
    async (pageSizeAnswer) => {
      await t.db.deleteFrom('rewards.sync_windows').execute();
      await t.db.deleteFrom('rewards.sync_state').execute();
      sim.control.faults.set({ pageSizeAnswer });
      const outcome = await runCheckinsPass(h.deps);
      expect(outcome.status).toBe('succeeded');
      expect(outcome.details?.['split']).toBe(0);
      const windows = await windowsInRange(t.db, {});
      // 20 hours in 6-hour cells: a handful of windows, not hundreds of minimum-size ones.
      expect(windows.length).toBeLessThanOrEqual(6);
    },
  );

  it('a 200 MB answer: its window fails naming SVC_MAX_RESPONSE_SIZE, other windows complete, the next pass completes it', async () => {
    await t.db.deleteFrom('rewards.sync_windows').execute();
    await t.db.deleteFrom('rewards.sync_state').execute();
    sim.control.faults.set({ oversizedNext: 1 });
    const first = await runCheckinsPass(h.deps);
    expect(first.status).not.toBe('succeeded');
    expect(first.problems?.join('\n')).toMatch(/larger than 1MB \(SVC_MAX_RESPONSE_SIZE\)/);
    const failed = (await windowsInRange(t.db, {})).filter((w) => w.status !== 'complete');
    expect(failed.length).toBeGreaterThanOrEqual(1);
    const second = await runCheckinsPass(h.deps);
    expect(second.status).toBe('succeeded');
    const windows = await windowsInRange(t.db, {});
    expect(windows.every((w) => w.status === 'complete')).toBe(true);
    // complete = the stored rows of every window match the API's total_count for it
  });
});
