import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseFeedCheckIn, type CheckIn } from '../../../src/records/index.js';
import { checkInInsert } from '../../../src/warehouse/check-ins.js';
import { migrations } from '../../../migrations/index.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { feedCheckIn } from '../../unit/records/fixtures.js';

// Migration 0015: a first-read page (checkInInsert) counts its own rows into check_ins_daily and
// the first-seen hourly counts, and the insert trigger only checks that it counted what was
// inserted. Any other insert is still counted by the trigger.

const base = (() => {
  const parsed = parseFeedCheckIn(feedCheckIn());
  if (!parsed.ok) throw new Error(parsed.rejection.reason);
  return parsed.record;
})();
const id = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const row = (i: number, at: string, ended: boolean): CheckIn => ({
  ...base,
  id: id(i),
  createdAtMs: Date.parse(at),
  endedAtMs: ended ? Date.parse(at) + 20 * 60_000 : null,
  svcPayEnabled: i % 2 === 0,
});
const SEEN = new Date('2026-11-10T12:34:00Z');

describe('a first-read page counts its own rows; the insert trigger checks the count', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase('page_counts');
  });
  afterAll(async () => t.drop());
  beforeEach(async () => {
    await sql`truncate rewards.check_ins, rewards.check_in_ids, rewards.check_ins_daily_rollup, rewards.check_ins_first_seen_hourly`.execute(
      t.db,
    );
  });

  const rollup = async () =>
    (
      await sql<{ day: string; check_ins: number; svc_pay_check_ins: number; median_settled: boolean }>`
        select day::text, check_ins, svc_pay_check_ins, median_settled
        from rewards.check_ins_daily_rollup order by day`.execute(t.db)
    ).rows;
  const hourly = async () =>
    (
      await sql<{
        n: string;
      }>`select coalesce(sum(rows), 0)::text as n from rewards.check_ins_first_seen_hourly`.execute(t.db)
    ).rows[0]?.n;

  it('the page statement writes the groups it made, as the trigger would have', async () => {
    const page = [
      row(1, '2026-11-01T09:00:00Z', true),
      row(2, '2026-11-01T10:00:00Z', false),
      row(3, '2026-11-02T11:00:00Z', false),
      row(3, '2026-11-02T11:00:00Z', false), // listed twice: one row, counted once
    ];
    await sql`with ${sql.join(checkInInsert(page, SEEN)!.ctes)} select 1`.execute(t.db);
    expect(await rollup()).toEqual([
      { day: '2026-11-01', check_ins: 2, svc_pay_check_ins: 1, median_settled: false },
      { day: '2026-11-02', check_ins: 1, svc_pay_check_ins: 0, median_settled: true },
    ]);
    expect(await hourly()).toBe('3');
    const { rows } = await sql<{
      hour: string;
    }>`select hour::text from rewards.check_ins_first_seen_hourly`.execute(t.db);
    expect(rows.map((r) => r.hour)).toEqual([String(Math.floor(SEEN.getTime() / 3_600_000))]);
  });

  it('a count that differs from the rows inserted fails the statement, and nothing of it is kept', async () => {
    const counted = sql`select rewards.check_ins_count_page(
      array['2026-11-01']::date[], array[${base.restaurantId}]::uuid[], array[${base.locationId}]::uuid[],
      array[2]::int4[], array[0]::int4[], array[false], ${SEEN}::timestamptz) as n`;
    await expect(
      sql`with c as (${counted}),
        i as (insert into rewards.check_ins (id, location_id, restaurant_id, svc_pay_enabled, created_at, first_seen_at, last_seen_at)
          select ${id(1)}::uuid, ${base.locationId}::uuid, ${base.restaurantId}::uuid, false,
            '2026-11-01T09:00:00Z'::timestamptz, ${SEEN}::timestamptz, ${SEEN}::timestamptz
          where (select n from c) is not null)
        select 1`.execute(t.db),
    ).rejects.toThrow(/counted 2 rows into the rollups but inserted 1/);
    expect(await rollup()).toEqual([]);
    expect(await hourly()).toBe('0');
    // A group count of zero or less is refused: the function counts inserted rows only.
    await expect(
      sql`select rewards.check_ins_count_page(array['2026-11-01']::date[], array[${base.restaurantId}]::uuid[],
        array[${base.locationId}]::uuid[], array[0]::int4[], array[0]::int4[], array[false], ${SEEN}::timestamptz)`.execute(
        t.db,
      ),
    ).rejects.toThrow(/must be positive/);
  });

  it('any other insert is counted by the trigger, even after a counted page in the same transaction', async () => {
    await t.db.transaction().execute(async (trx) => {
      await sql`with ${sql.join(checkInInsert([row(1, '2026-11-01T09:00:00Z', false)], SEEN)!.ctes)} select 1`.execute(
        trx,
      );
      // A hand-written insert after it: the page's count was cleared by its own statement's trigger.
      await sql`insert into rewards.check_ins (id, location_id, restaurant_id, svc_pay_enabled, created_at, first_seen_at, last_seen_at)
        values (${id(2)}, ${base.locationId}, ${base.restaurantId}, true, '2026-11-01T10:00:00Z', ${SEEN}, ${SEEN})`.execute(
        trx,
      );
    });
    expect(await rollup()).toEqual([
      { day: '2026-11-01', check_ins: 2, svc_pay_check_ins: 1, median_settled: true },
    ]);
    expect(await hourly()).toBe('2');
  });
  it("migration 0015's down gives the counting back to the trigger, and up again takes it", async () => {
    const migration = migrations['20261127_0015_checkins_counted_by_page']!;
    await migration.down!(t.db);
    try {
      await sql`insert into rewards.check_ins (id, location_id, restaurant_id, svc_pay_enabled, created_at, first_seen_at, last_seen_at)
        values (${id(1)}, ${base.locationId}, ${base.restaurantId}, false, '2026-11-01T09:00:00Z', ${SEEN}, ${SEEN})`.execute(
        t.db,
      );
      expect(await rollup()).toEqual([
        { day: '2026-11-01', check_ins: 1, svc_pay_check_ins: 0, median_settled: true },
      ]);
    } finally {
      await migration.up(t.db);
    }
    await sql`with ${sql.join(checkInInsert([row(2, '2026-11-01T10:00:00Z', true)], SEEN)!.ctes)} select 1`.execute(
      t.db,
    );
    expect(await rollup()).toEqual([
      { day: '2026-11-01', check_ins: 2, svc_pay_check_ins: 1, median_settled: false },
    ]);
    expect(await hourly()).toBe('2');
  });
});
