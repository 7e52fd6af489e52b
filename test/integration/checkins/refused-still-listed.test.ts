import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/clock.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { pageWindow } from '../../../src/streams/checkins/page-window.js';
import { runCheckinsPass } from '../../../src/streams/checkins/pass.js';
import { probeWindow } from '../../../src/streams/checkins/window-check.js';
import type { Window } from '../../../src/sync/windows.js';
import { loadWindow } from '../../../src/warehouse/sync-windows.js';
import { windowOf, windowsInRange } from '../../../src/warehouse/sync-window-reads.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { createPipelineHarness, type PipelineHarness } from '../../helpers/pipeline.js';

// Issue 26: a check-in the API still lists is never treated as missing, even when its new value
// is one the warehouse refuses (validation, or the database itself).

const HOUR = 3_600_000;
const MINUTE = 60_000;
const anchor = new Date(Math.floor(Date.now() / HOUR) * HOUR - 10 * MINUTE);
const start = new Date(anchor.getTime() - 20 * HOUR);

describe('a record the API still lists is never treated as missing', () => {
  let sim: RunningSimulator;
  let t: TestDatabase;
  let h: PipelineHarness;
  const clock = fixedClock(new Date());
  let window: Window;
  let ids: string[];

  beforeAll(async () => {
    sim = await startSimulator({ seed: 26, checkIns: 300, anchor, days: 1 });
    t = await createTestDatabase('refused_still_listed');
    h = createPipelineHarness({
      sim,
      db: t.db,
      clock,
      label: 'refused-still-listed',
      env: {
        CHECKINS_START_AT: start.toISOString(),
        CHECKINS_WINDOW: '6h',
        SVC_PAGE_SIZE: '50',
        CHECKINS_SAFETY_LAG: '2m',
        CHECKINS_DELETE_CONFIRM_AFTER: '30m',
      },
    });
    expect((await runCheckinsPass(h.deps)).status).toBe('succeeded');
    const complete = await windowsInRange(t.db, {}, ['complete']);
    window = windowOf(complete.find((w) => (w.api_total_count ?? 0) > 20)!);
    ids = (
      await t.db
        .selectFrom('rewards.check_ins')
        .select('id')
        .where('created_at', '>=', new Date(window.start))
        .where('created_at', '<', new Date(window.end))
        .orderBy('created_at', 'desc')
        .execute()
    ).map((r) => r.id);
  });
  afterEach(() => sim.control.faults.reset());
  afterAll(async () => {
    await h?.close();
    await t?.drop();
    await sim?.close();
  });

  const rowOf = (id: string) =>
    t.db
      .selectFrom('rewards.check_ins')
      .select(['id', 'deleted_at', 'last_seen_at'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();

  it('a stored check-in whose next reads carry U+0000 in the location name is never suspected nor marked deleted', async () => {
    const hostile = ids[5]!;
    sim.control.faults.set({ hostileCheckIns: { [hostile]: 'nul' } });
    clock.advance(MINUTE);
    const sightedAfter = clock.now();
    expect(await pageWindow(h.deps, window, { force: true })).toMatchObject({
      status: 'complete',
      removed: 0,
    });
    let row = await rowOf(hostile);
    expect(row.deleted_at).toBeNull();
    // Its sighting is refreshed: the API listed it, even though its new value was refused.
    expect(row.last_seen_at.getTime()).toBeGreaterThanOrEqual(sightedAfter.getTime());
    let state = await loadWindow(t.db, window);
    expect(state?.drop_suspected_at).toBeNull();
    // Counted once: as a stored row, not also as a rejected one.
    expect(state?.rows_rejected).toBe(0);

    // The second read, past CHECKINS_DELETE_CONFIRM_AFTER, is where it used to be marked deleted.
    clock.advance(31 * MINUTE);
    expect(await pageWindow(h.deps, window, { force: true })).toMatchObject({
      status: 'complete',
      removed: 0,
    });
    row = await rowOf(hostile);
    expect(row.deleted_at).toBeNull();
    state = await loadWindow(t.db, window);
    expect(state?.drop_suspected_at).toBeNull();
    const rejected = await t.db
      .selectFrom('rewards.rejected_records')
      .select(['record_id', 'reason'])
      .where('record_id', '=', hostile)
      .execute();
    expect(rejected).toHaveLength(1);
    expect(rejected[0]?.reason).toMatch(/U\+0000/);

    // verify counts honestly: the API's 1 record is the warehouse's 1 row, not also a rejection.
    const probe = await probeWindow(h.deps, state!);
    expect(probe).toMatchObject({ matches: true, rejected: 0 });
    expect(probe.warehouse).toBe(probe.apiTotal);
  });

  it('the refused record does not hide a row really missing from the warehouse', async () => {
    sim.control.faults.set({ hostileCheckIns: { [ids[5]!]: 'nul' } });
    clock.advance(MINUTE);
    await pageWindow(h.deps, window, { force: true });
    await t.db.deleteFrom('rewards.check_ins').where('id', '=', ids[9]!).execute();
    const probe = await probeWindow(h.deps, (await loadWindow(t.db, window))!);
    expect(probe.matches).toBe(false);
    expect(probe.warehouse + probe.rejected).toBe(probe.apiTotal - 1);
    // Paged again, the missing row is stored again and everything matches.
    clock.advance(MINUTE);
    await pageWindow(h.deps, window, { force: true });
    expect((await probeWindow(h.deps, (await loadWindow(t.db, window))!)).matches).toBe(true);
  });

  it('a check-in the database refuses on a later read keeps its stored row alive', async () => {
    const refused = ids[12]!;
    // A BEFORE INSERT trigger refuses the upsert of this row (as an unstorable new value would);
    // its stored row itself is untouched.
    await sql`
      create function rewards.refuse_insert() returns trigger language plpgsql as $$
      begin
        if new.id = ${sql.lit(refused)}::uuid then
          raise exception 'value refused for this test' using errcode = '22023';
        end if;
        return new;
      end $$`.execute(t.db);
    await sql`create trigger refuse_insert before insert on rewards.check_ins
      for each row execute function rewards.refuse_insert()`.execute(t.db);
    try {
      for (const step of [MINUTE, 31 * MINUTE]) {
        clock.advance(step);
        expect(await pageWindow(h.deps, window, { force: true })).toMatchObject({
          status: 'complete',
          removed: 0,
        });
        expect((await rowOf(refused)).deleted_at).toBeNull();
        expect((await loadWindow(t.db, window))?.drop_suspected_at).toBeNull();
      }
      expect((await probeWindow(h.deps, (await loadWindow(t.db, window))!)).matches).toBe(true);
    } finally {
      await sql`drop trigger refuse_insert on rewards.check_ins`.execute(t.db);
      await sql`drop function rewards.refuse_insert()`.execute(t.db);
    }
  });
});
