import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { fixedClock } from '../../../src/clock.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { pageWindow } from '../../../src/streams/checkins/page-window.js';
import { runCheckinsPass } from '../../../src/streams/checkins/pass.js';
import { planCheckinWindows } from '../../../src/streams/checkins/plan.js';
import { createDatabase } from '../../../src/warehouse/database.js';
import { windowsInRange } from '../../../src/warehouse/sync-window-reads.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { createPipelineHarness, type PipelineHarness } from '../../helpers/pipeline.js';

const HOUR = 3_600_000;
const anchor = new Date(Math.floor(Date.now() / HOUR) * HOUR - 10 * 60_000);
const start = new Date(anchor.getTime() - 48 * HOUR);

/** The API's own view of [from, to): every id with its fields, paged with a huge page size. */
async function apiCheckIns(sim: RunningSimulator, from: Date, to: Date) {
  const out = new Map<
    string,
    { created_at: string; ended_at: string | null; svc_pay_enabled: boolean; location: string }
  >();
  for (let page = 0; ; page++) {
    const url = `${sim.baseUrl}/check_ins?created_after=${from.toISOString()}&created_before=${to.toISOString()}&page=${page}&page_size=500`;
    const response = await fetch(url, {
      headers: { 'X-API-Key': sim.credentials.apiKey, 'User-Agent': 'test' },
    });
    const body = (await response.json()) as { check_ins: any[]; pagination: { next_page: number | null } };
    for (const c of body.check_ins) {
      out.set(c.id, {
        created_at: c.created_at,
        ended_at: c.ended_at,
        svc_pay_enabled: c.svc_pay_enabled,
        location: c.location.id,
      });
    }
    if (body.pagination.next_page === null) return out;
  }
}

async function warehouseIds(t: TestDatabase, from: Date, to: Date) {
  const rows = await t.db
    .selectFrom('rewards.check_ins')
    .select(['id', 'created_at', 'ended_at', 'svc_pay_enabled', 'location_id'])
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .execute();
  return new Map(rows.map((r) => [r.id, r]));
}

/** The planned window (a sync_windows row) that contains `at`, made pending again. */
async function windowContaining(t: TestDatabase, at: number) {
  const row = await t.db
    .selectFrom('rewards.sync_windows')
    .selectAll()
    .where('window_start', '<=', new Date(at))
    .where('window_end', '>', new Date(at))
    .executeTakeFirstOrThrow();
  await t.db
    .updateTable('rewards.sync_windows')
    .set({ status: 'pending' })
    .where('window_start', '=', row.window_start)
    .execute();
  return { start: row.window_start.getTime(), end: row.window_end.getTime() };
}

describe('check-in feed ingestion', () => {
  let sim: RunningSimulator;
  let t: TestDatabase;
  let h: PipelineHarness;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 7, checkIns: 4_000, anchor, days: 3 });
    t = await createTestDatabase('checkins');
    h = createPipelineHarness({
      sim,
      db: t.db,
      label: 'checkins',
      env: {
        CHECKINS_START_AT: start.toISOString(),
        CHECKINS_WINDOW: '6h',
        SVC_PAGE_SIZE: '50',
        CHECKINS_SAFETY_LAG: '2m',
      },
    });
  });
  afterAll(async () => {
    await h?.close();
    await t?.drop();
    await sim?.close();
  });

  it('a complete ingest holds exactly what the API holds, field for field', async () => {
    const outcome = await runCheckinsPass(h.deps);
    expect(outcome.status).toBe('succeeded');
    const end = new Date(Date.now() - 2 * 60_000);
    const [api, ours] = await Promise.all([apiCheckIns(sim, start, end), warehouseIds(t, start, end)]);
    expect(api.size).toBeGreaterThan(1_000);
    expect(ours.size).toBe(api.size);
    for (const [id, record] of api) {
      const row = ours.get(id);
      expect(row, id).toBeDefined();
      expect(row!.created_at.toISOString()).toBe(new Date(record.created_at).toISOString());
      expect(row!.ended_at?.toISOString() ?? null).toBe(
        record.ended_at === null ? null : new Date(record.ended_at).toISOString(),
      );
      expect(row!.svc_pay_enabled).toBe(record.svc_pay_enabled);
      expect(row!.location_id).toBe(record.location);
    }
    const windows = await windowsInRange(t.db, {});
    expect(windows.every((w) => w.status === 'complete')).toBe(true);
    // Each window's recorded API count is what the warehouse holds for it.
    for (const w of windows) {
      expect((await warehouseIds(t, w.window_start, w.window_end)).size).toBe(w.api_total_count);
    }
    // Embedded locations, their restaurants and neighborhoods came from the same pages.
    const { rows } = await sql<{ missing: string }>`
      select count(*) as missing from rewards.check_ins c
      left join rewards.locations l on l.id = c.location_id
      left join rewards.neighborhoods n on n.id = l.neighborhood_id
      left join rewards.restaurants r on r.id = c.restaurant_id
      where l.id is null or n.id is null or r.id is null`.execute(t.db);
    expect(Number(rows[0]!.missing)).toBe(0);
    const state = await t.db
      .selectFrom('rewards.sync_state')
      .selectAll()
      .where('stream', '=', 'checkins')
      .executeTakeFirstOrThrow();
    expect(state.watermark!.getTime()).toBeGreaterThan(end.getTime() - 6 * HOUR);
  });

  it('a page-number pager loses rows when records arrive above it; the keyset pager does not', async () => {
    // The naive way, to show the fault is real: page numbers while the simulator inserts newer rows.
    const from = new Date(start.getTime() + 6 * HOUR);
    const to = new Date(start.getTime() + 12 * HOUR);
    const total = (await apiCheckIns(sim, from, to)).size;
    sim.control.faults.set({ shiftNextPageBy: 5 });
    const naive = new Set<string>();
    for (let page = 0; ; page++) {
      const url = `${sim.baseUrl}/check_ins?created_after=${from.toISOString()}&created_before=${to.toISOString()}&page=${page}&page_size=20`;
      const body = (await (
        await fetch(url, { headers: { 'X-API-Key': sim.credentials.apiKey, 'User-Agent': 't' } })
      ).json()) as any;
      for (const c of body.check_ins) naive.add(c.id);
      if (body.pagination.next_page === null) break;
    }
    sim.control.faults.reset();
    const after = await apiCheckIns(sim, from, to);
    expect(after.size).toBe(total + 5);
    expect(naive.size).toBeLessThan(after.size);

    // Ours: late rows land inside a window while it is being paged, after its first page.
    const w = await windowContaining(t, start.getTime() + 12 * HOUR + HOUR);
    // Visits follow the venues' local day: at a quiet hour this window would fit in one page and
    // never reach a second. 300 more (ended, before the late ones' hour) keep it several pages long.
    sim.control.checkIns.addLate(300, { from: new Date(w.start), to: new Date(w.end - HOUR) });
    let pages = 0;
    const api = {
      ...h.deps.api,
      checkInPages: (query: Parameters<typeof h.deps.api.checkInPages>[0]) => {
        pages++;
        if (pages === 2)
          sim.control.checkIns.addLate(7, { from: new Date(w.end - HOUR), to: new Date(w.end - 1) });
        return h.deps.api.checkInPages(query);
      },
    };
    const outcome = await pageWindow({ ...h.deps, api }, w, { force: true });
    expect(outcome.status).toBe('complete');
    const [apiRows, ours] = await Promise.all([
      apiCheckIns(sim, new Date(w.start), new Date(w.end)),
      warehouseIds(t, new Date(w.start), new Date(w.end)),
    ]);
    expect([...ours.keys()].sort()).toEqual([...apiRows.keys()].sort());
    const row = (await windowsInRange(t.db, { from: new Date(w.start), to: new Date(w.end) }))[0]!;
    expect(row.repages).toBeGreaterThanOrEqual(1);
    expect(row.api_total_count).toBe(apiRows.size);
  });

  it('late arrivals and ended visits inside the look-back are caught by the next pass', async () => {
    const ongoingBefore = await t.db
      .selectFrom('rewards.check_ins')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('ended_at', 'is', null)
      .executeTakeFirstOrThrow();
    expect(Number(ongoingBefore.n)).toBeGreaterThan(0);
    const late = sim.control.checkIns.addLate(9, {
      from: new Date(anchor.getTime() - 5 * HOUR),
      to: new Date(anchor.getTime() - 4 * HOUR),
    });
    const ended = sim.control.checkIns.endOngoing();
    expect(ended).toBeGreaterThan(0);
    // Look-back probes windows not checked for CHECKINS_LOOKBACK_EVERY; make them due now.
    await t.db.updateTable('rewards.sync_windows').set({ last_checked_at: null }).execute();
    const outcome = await runCheckinsPass(h.deps);
    expect(outcome.details?.['lookbackRepaged']).toBeGreaterThan(0);
    const found = await t.db.selectFrom('rewards.check_ins').select('id').where('id', 'in', late).execute();
    expect(found).toHaveLength(9);
    const stillOngoing = await t.db
      .selectFrom('rewards.check_ins')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('ended_at', 'is', null)
      .where('created_at', '<', new Date(Date.now() - 2 * 60_000))
      .executeTakeFirstOrThrow();
    expect(Number(stillOngoing.n)).toBe(0);
  });

  it('two workers given the same window at once produce no duplicate and page it once', async () => {
    const w = await windowContaining(t, start.getTime() + 18 * HOUR + HOUR);
    const other = createDatabase({ url: t.url, maxConnections: 3 });
    try {
      const [a, b] = await Promise.all([pageWindow(h.deps, w), pageWindow({ ...h.deps, db: other }, w)]);
      expect([a.status, b.status].sort()).toEqual(['complete', 'skipped']);
    } finally {
      await other.destroy();
    }
    const api = await apiCheckIns(sim, new Date(w.start), new Date(w.end));
    expect((await warehouseIds(t, new Date(w.start), new Date(w.end))).size).toBe(api.size);
  });

  it('malformed records go to rejected_records with a reason, and the window still completes', async () => {
    const w = await windowContaining(t, start.getTime() + 24 * HOUR + HOUR);
    sim.control.faults.set({ malformedNext: 2 });
    const outcome = await pageWindow(h.deps, w);
    sim.control.faults.reset();
    expect(outcome.status).toBe('complete');
    const rejected = await t.db
      .selectFrom('rewards.rejected_records')
      .selectAll()
      .where('stream', '=', 'checkins')
      .execute();
    expect(rejected.length).toBeGreaterThan(0);
    expect(rejected.every((r) => r.reason.length > 0 && r.payload !== null)).toBe(true);
    const row = (await windowsInRange(t.db, { from: new Date(w.start), to: new Date(w.end) }))[0]!;
    expect(row.rows_rejected).toBeGreaterThan(0);
  });

  it('planning twice, or a backfill over a synced period, never creates overlapping windows', async () => {
    await planCheckinWindows(h.deps, {
      from: new Date(start.getTime() - 12 * HOUR),
      to: new Date(start.getTime() + 30 * HOUR),
    });
    await planCheckinWindows(h.deps);
    const windows = await windowsInRange(t.db, {});
    for (let i = 1; i < windows.length; i++) {
      expect(windows[i]!.window_start.getTime()).toBeGreaterThanOrEqual(windows[i - 1]!.window_end.getTime());
    }
  });

  it('the tail windows that frequent planning leaves merge into one grid window once complete', async () => {
    const cellMs = 6 * HOUR;
    // Start well inside a cell: right after a cell boundary the ticks below would cross it and
    // leave a single window (CI once ran this at 00:00:36).
    const now = Date.now();
    const intoCell = now % cellMs;
    const clock = fixedClock(new Date(intoCell < 15 * 60_000 ? now - intoCell + 15 * 60_000 : now));
    const deps = { ...h.deps, clock };
    const cellEnd = Math.ceil((clock.now().getTime() - 2 * 60_000) / cellMs) * cellMs;
    // A few planner ticks a minute apart inside the current cell, then past its end.
    for (let tick = 0; tick < 3; tick++) {
      clock.advance(60_000);
      await runCheckinsPass(deps);
    }
    const before = await windowsInRange(t.db, { from: new Date(cellEnd - cellMs), to: new Date(cellEnd) });
    expect(before.length).toBeGreaterThan(1);
    clock.set(new Date(cellEnd + 3 * 60_000));
    await runCheckinsPass(deps); // pages the last fragment of the cell
    await runCheckinsPass(deps); // the planner merges the now complete cell
    const after = await windowsInRange(t.db, { from: new Date(cellEnd - cellMs), to: new Date(cellEnd) });
    expect(after.map((w) => [w.window_start.getTime(), w.window_end.getTime(), w.status])).toEqual([
      [cellEnd - cellMs, cellEnd, 'complete'],
    ]);
    const api = await apiCheckIns(sim, new Date(cellEnd - cellMs), new Date(cellEnd));
    expect(after[0]!.api_total_count).toBe(api.size);
    expect((await warehouseIds(t, new Date(cellEnd - cellMs), new Date(cellEnd))).size).toBe(api.size);
  });
});
