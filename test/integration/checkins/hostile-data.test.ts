import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import type { HostileValue } from '../../../src/simulator/faults.js';
import { runCheckinsPass } from '../../../src/streams/checkins/pass.js';
import { windowsInRange } from '../../../src/warehouse/sync-window-reads.js';
import { createTestDatabase, whileRowRefused, type TestDatabase } from '../../helpers/db.js';
import { createPipelineHarness, type PipelineHarness } from '../../helpers/pipeline.js';

const HOUR = 3_600_000;
const anchor = new Date(Math.floor(Date.now() / HOUR) * HOUR - 10 * 60_000);
const start = new Date(anchor.getTime() - 20 * HOUR);

/** Every check-in id the API serves in [start, now), newest first. */
async function apiIds(sim: RunningSimulator): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 0; ; page++) {
    const url = `${sim.baseUrl}/check_ins?created_after=${start.toISOString()}&page=${page}&page_size=500`;
    const response = await fetch(url, {
      headers: { 'X-API-Key': sim.credentials.apiKey, 'User-Agent': 'test' },
    });
    const body = (await response.json()) as {
      check_ins: { id: string }[];
      pagination: { next_page: number | null };
    };
    ids.push(...body.check_ins.map((c) => c.id));
    if (body.pagination.next_page === null) return ids;
  }
}

describe('hostile values in the check-in feed never stall a window', () => {
  let sim: RunningSimulator;
  let t: TestDatabase;
  let h: PipelineHarness;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 13, checkIns: 600, anchor, days: 1 });
    t = await createTestDatabase('hostile_checkins');
    h = createPipelineHarness({
      sim,
      db: t.db,
      label: 'hostile-checkins',
      env: {
        CHECKINS_START_AT: start.toISOString(),
        CHECKINS_WINDOW: '6h',
        SVC_PAGE_SIZE: '50',
        CHECKINS_SAFETY_LAG: '2m',
      },
    });
  });
  afterEach(() => sim.control.faults.reset());
  afterAll(async () => {
    await h?.close();
    await t?.drop();
    await sim?.close();
  });

  const storedIds = async () =>
    new Set((await t.db.selectFrom('rewards.check_ins').select('id').execute()).map((r) => r.id));
  const rejections = () =>
    t.db
      .selectFrom('rewards.rejected_records')
      .select(['record_id', 'reason', 'payload'])
      .where('stream', '=', 'checkins')
      .execute();

  it('each value Postgres would refuse becomes a rejected record naming its field; the rest of the page is stored and every window completes', async () => {
    const ids = await apiIds(sim);
    expect(ids.length).toBeGreaterThan(100);
    const hostile: Record<string, HostileValue> = {
      [ids[3]!]: 'nul',
      [ids[4]!]: 'lone-surrogate',
      [ids[60]!]: 'year-0000',
      [ids[61]!]: 'int-overflow',
      [ids[200]!]: 'deep-json',
    };
    sim.control.faults.set({ hostileCheckIns: hostile });

    const outcome = await runCheckinsPass(h.deps);

    const windows = await windowsInRange(t.db, {});
    expect(windows.filter((w) => w.status !== 'complete').map((w) => w.last_error)).toEqual([]);
    expect(outcome.status).toBe('succeeded');
    expect(windows.length).toBeGreaterThan(1);
    expect(windows.map((w) => w.status).filter((s) => s !== 'complete')).toEqual([]);
    const stored = await storedIds();
    for (const id of ids) expect(stored.has(id), id).toBe(!(id in hostile));
    const reasons = new Map((await rejections()).map((r) => [r.record_id, r.reason]));
    expect(reasons.get(ids[3]!)).toMatch(/^location\.name: string holds U\+0000/);
    expect(reasons.get(ids[4]!)).toMatch(/^location\.name: string holds a lone UTF-16 surrogate/);
    expect(reasons.get(ids[60]!)).toMatch(/^ended_at: .*year 0000/);
    expect(reasons.get(ids[61]!)).toMatch(/^location\.restaurant\.price: .*32-bit integer range/);
    expect(reasons.get(ids[200]!)).toMatch(
      /^location\.restaurant\.tags(\[0\])+: nested deeper than 32 levels/,
    );
    // Each window's proof holds: rows stored + rejected = the API's total_count.
    for (const w of windows)
      expect(w.rows_seen + w.rows_rejected).toBeGreaterThanOrEqual(w.api_total_count ?? 0);
  });

  it('when the database still refuses a record of a page, the page is written record by record and only that record is rejected', async () => {
    const ids = await apiIds(sim);
    const victim = ids[10]!;
    // A value our validation cannot know about: the warehouse refuses this one row with a data error.
    await whileRowRefused(t.db, { table: 'check_ins', id: victim, sqlstate: '22023' }, async () => {
      await t.db.deleteFrom('rewards.check_ins').execute();
      await t.db
        .updateTable('rewards.sync_windows')
        .set({ status: 'pending', last_checked_at: null })
        .execute();

      const outcome = await runCheckinsPass(h.deps);

      expect(outcome.status).toBe('succeeded');
      const stored = await storedIds();
      expect(stored.has(victim)).toBe(false);
      expect(stored.size).toBe(ids.length - 1);
      const refused = (await rejections()).find((r) => r.record_id === victim);
      expect(refused?.reason).toMatch(/SQLSTATE 22023.*value refused for this test/);
      expect(refused?.payload).toMatchObject({ id: victim, object: 'check_in' });
      const windows = await windowsInRange(t.db, {});
      expect(windows.map((w) => w.status).filter((s) => s !== 'complete')).toEqual([]);
    });
  });
});
