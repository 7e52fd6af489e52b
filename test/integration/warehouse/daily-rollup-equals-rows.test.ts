import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFeedCheckIn, type CheckIn } from '../../../src/records/index.js';
import {
  checkInInsert,
  isHeldIdConflict,
  refreshRefusedSightings,
  unseenWindowRows,
  upsertCheckInPage,
} from '../../../src/warehouse/check-ins.js';
import { compareRollupWithRows, settleRollupDays } from '../../../src/warehouse/check-ins-daily.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { feedCheckIn } from '../../unit/records/fixtures.js';

// check_ins_daily is kept by triggers (migrations 0009, 0013) and by first-read pages (0015). Whatever sequence of pages (late
// arrivals, visits that end, stale reads, ids back with another created_at), deletion marks,
// re-sightings and month partitions created after the fact, it equals the from-scratch
// aggregation of the live rows.

const base = (() => {
  const parsed = parseFeedCheckIn(feedCheckIn());
  if (!parsed.ok) throw new Error(parsed.rejection.reason);
  return parsed.record;
})();

const IDS = Array.from({ length: 14 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
const LOCATIONS = [
  {
    locationId: '10000000-0000-4000-8000-000000000001',
    restaurantId: '20000000-0000-4000-8000-000000000001',
  },
  {
    locationId: '10000000-0000-4000-8000-000000000002',
    restaurantId: '20000000-0000-4000-8000-000000000001',
  },
  {
    locationId: '10000000-0000-4000-8000-000000000003',
    restaurantId: '20000000-0000-4000-8000-000000000002',
  },
];
// Across a month boundary: October has no partition at first (its rows land in the default
// partition), November has one.
const DAYS = ['2026-10-30', '2026-10-31', '2026-11-01', '2026-11-02'].map((day) =>
  Date.parse(`${day}T00:00:00Z`),
);
const DAY_MS = 86_400_000;
const T0 = Date.parse('2026-11-10T00:00:00Z');

const record = fc.record({
  id: fc.nat(IDS.length - 1),
  day: fc.nat(DAYS.length - 1),
  minute: fc.nat(24 * 60 - 1),
  visit: fc.option(fc.constantFrom<number>(5, 12.5, 30, 31, 90), { nil: null }),
  pay: fc.boolean(),
  location: fc.nat(LOCATIONS.length - 1),
});

const operation = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('page' as const),
      rows: fc.array(record, { minLength: 1, maxLength: 8 }),
      stale: fc.boolean(),
      // A first read's plain insert (commitCheckInPage's expectNewIds), the upsert when an id is held.
      plain: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('mark-deleted' as const),
      day: fc.nat(DAYS.length - 1),
      back: fc.nat(3),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('seen-again' as const),
      day: fc.nat(DAYS.length - 1),
      ids: fc.array(fc.nat(IDS.length - 1), { maxLength: 4 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('create-october' as const) }) },
  // A completed window's step (migration 0013): the days' unsettled medians are stored.
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('settle' as const),
      day: fc.nat(DAYS.length - 1),
      days: fc.integer({ min: 1, max: 2 }),
    }),
  },
);

type Operation = typeof operation extends fc.Arbitrary<infer T> ? T : never;

type PageRow = typeof record extends fc.Arbitrary<infer T> ? T : never;

function toCheckIn(row: PageRow): CheckIn {
  const createdAtMs = DAYS[row.day]! + row.minute * 60_000;
  return {
    ...base,
    ...LOCATIONS[row.location]!,
    id: IDS[row.id]!,
    createdAtMs,
    endedAtMs: row.visit === null ? null : createdAtMs + row.visit * 60_000,
    svcPayEnabled: row.pay,
  };
}

describe('check_ins_daily is maintained incrementally and equals a from-scratch aggregation', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase('daily_rollup');
  });
  afterAll(async () => t.drop());

  async function reset() {
    await sql`truncate rewards.check_ins, rewards.check_in_ids, rewards.check_ins_daily_rollup, rewards.check_ins_first_seen_hourly`.execute(
      t.db,
    );
    await sql`drop table if exists rewards.check_ins_p202610`.execute(t.db);
  }

  async function apply(ops: readonly Operation[]) {
    let tick = 10;
    for (const op of ops) {
      tick++;
      if (op.kind === 'page') {
        // A stale read (older than the last write) must change nothing, rollup included.
        const seenAt = new Date(T0 + (op.stale ? tick - 8 : tick) * 1000);
        const rows = op.rows.map(toCheckIn);
        if (op.plain) {
          try {
            await sql`with ${sql.join(checkInInsert(rows, seenAt)!.ctes)} select 1`.execute(t.db);
            continue;
          } catch (error) {
            if (!isHeldIdConflict(error)) throw error;
          }
        }
        await upsertCheckInPage(t.db, rows, seenAt);
      } else if (op.kind === 'mark-deleted') {
        const day = DAYS[op.day]!;
        const window = { start: new Date(day), end: new Date(day + DAY_MS) };
        await unseenWindowRows(
          t.db,
          window,
          new Date(T0 + (tick - op.back) * 1000),
          new Date(T0 + tick * 1000),
        );
      } else if (op.kind === 'seen-again') {
        const day = DAYS[op.day]!;
        const window = { start: new Date(day), end: new Date(day + DAY_MS) };
        await refreshRefusedSightings(
          t.db,
          window,
          op.ids.map((i) => IDS[i]!),
          new Date(T0 + tick * 1000),
        );
      } else if (op.kind === 'settle') {
        const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
        await settleRollupDays(t.db, iso(DAYS[op.day]!), iso(DAYS[op.day]! + op.days * DAY_MS));
      } else {
        await sql`select rewards.create_check_ins_month('2026-10-01')`.execute(t.db);
      }
    }
  }

  it('after random pages, late arrivals, ended visits, moves, deletions and re-sightings', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 14 }), async (ops) => {
        await reset();
        await apply(ops);
        const differences = await compareRollupWithRows(t.db, '2026-10-01', '2026-12-01');
        expect(differences).toEqual([]);
        // What a reader of the view sees, unsettled medians (read from the rows) included.
        const { rows: view } = await sql`
          select day, restaurant_id, location_id, check_ins, svc_pay_check_ins, median_visit_minutes
          from rewards.check_ins_daily order by 1, 2, 3`.execute(t.db);
        const { rows: scratch } = await sql`
          select (created_at at time zone 'UTC')::date as day, restaurant_id, location_id,
            count(*)::integer as check_ins, (count(*) filter (where svc_pay_enabled))::integer as svc_pay_check_ins,
            percentile_cont(0.5) within group (order by extract(epoch from (ended_at - created_at)) / 60.0)
              filter (where ended_at is not null) as median_visit_minutes
          from rewards.check_ins where deleted_at is null group by 1, 2, 3 order by 1, 2, 3`.execute(t.db);
        expect(view).toEqual(scratch);
        // Settled, the stored medians are the exact ones too.
        await settleRollupDays(t.db, '2026-10-01', '2026-12-01');
        const { rows: unsettled } = await sql<{ n: string }>`
          select count(*) as n from rewards.check_ins_daily_rollup where not median_settled`.execute(t.db);
        expect(unsettled[0]?.n).toBe('0');
        expect(await compareRollupWithRows(t.db, '2026-10-01', '2026-12-01')).toEqual([]);
        // The first-seen hourly counts (the status page's chart) equal the rows too, whoever
        // counted them: a first-read page itself (migration 0015) or the insert trigger.
        const { rows: hourly } = await sql`
          select hour::text, sum(rows)::text as n from rewards.check_ins_first_seen_hourly
          group by 1 having sum(rows) <> 0 order by 1`.execute(t.db);
        const { rows: hourlyScratch } = await sql`
          select floor(extract(epoch from first_seen_at) / 3600)::bigint::text as hour, count(*)::text as n
          from rewards.check_ins group by 1 order by 1`.execute(t.db);
        expect(hourly).toEqual(hourlyScratch);
        // An id is stored once, whatever created_at it came back with.
        const { rows } = await sql<{ all: string; ids: string }>`
          select count(*) as all, count(distinct id) as ids from rewards.check_ins`.execute(t.db);
        expect(rows[0]?.all).toBe(rows[0]?.ids);
        // The default partition holds only months nobody created.
        const { rows: parked } = await sql<{ n: string }>`
          select count(*) as n from rewards.check_ins_default
          where created_at >= '2026-11-01T00:00:00Z' or to_regclass('rewards.check_ins_p202610') is not null`.execute(
          t.db,
        );
        expect(parked[0]?.n).toBe('0');
      }),
      { numRuns: 60 },
    );
  });

  it('a from-scratch aggregation of a random page equals the rollup (the view keeps its columns)', async () => {
    await reset();
    await upsertCheckInPage(
      t.db,
      [0, 1, 2, 3].map((i) =>
        toCheckIn({
          id: i,
          day: 2,
          minute: 60 * i,
          visit: i === 3 ? null : 10 * (i + 1),
          pay: i % 2 === 0,
          location: 0,
        }),
      ),
      new Date(T0),
    );
    const view = await t.db.selectFrom('rewards.check_ins_daily').selectAll().execute();
    expect(view).toEqual([
      {
        day: new Date('2026-11-01T00:00:00Z'),
        restaurant_id: LOCATIONS[0]!.restaurantId,
        location_id: LOCATIONS[0]!.locationId,
        check_ins: 4,
        svc_pay_check_ins: 2,
        median_visit_minutes: 20,
      },
    ]);
  });
});
