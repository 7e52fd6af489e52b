import { sql, type Kysely } from 'kysely';
import type { Executor } from './database.js';
import type { DB } from './schema.js';
import { CHECKINS_STREAM } from './sync-window-reads.js';

/** A (day, restaurant, location) group where check_ins_daily and the rows disagree. */
export interface RollupDifference {
  day: string;
  restaurantId: string;
  locationId: string;
  rollup: { checkIns: number; svcPay: number; median: number | null } | null;
  rows: { checkIns: number; svcPay: number; median: number | null } | null;
}

const dayBounds = (from: string, to: string) => ({
  start: sql<Date>`(${from}::date::timestamp at time zone 'UTC')`,
  end: sql<Date>`(${to}::date::timestamp at time zone 'UTC')`,
});

/** The from-scratch aggregation check_ins_daily once was (a plain view), for the days [from, to). */
function fromScratch(from: string, to: string) {
  const { start, end } = dayBounds(from, to);
  return sql`
    select (created_at at time zone 'UTC')::date as day, restaurant_id, location_id,
      count(*)::integer as check_ins,
      (count(*) filter (where svc_pay_enabled))::integer as svc_pay_check_ins,
      percentile_cont(0.5) within group (order by extract(epoch from (ended_at - created_at)) / 60.0)
        filter (where ended_at is not null) as median_visit_minutes
    from rewards.check_ins
    where created_at >= ${start} and created_at < ${end} and deleted_at is null
    group by 1, 2, 3`;
}

/**
 * Stores the medians of check_ins_daily's unsettled groups of the UTC days [from, to), each
 * recomputed once from its rows (migration 0013): the step that follows a completed window, so a
 * page's write never re-reads its group. Returns the groups settled. Until then the view reads an
 * unsettled median from the rows, so readers never see a stale value.
 */
export async function settleRollupDays(db: Executor, from: string, to: string): Promise<number> {
  const { rows } = await sql<{ settled: number }>`
    select rewards.settle_check_ins_daily(${from}::date, ${to}::date) as settled`.execute(db);
  return rows[0]?.settled ?? 0;
}

/**
 * After a check-in window completes: settles the medians of each UTC day it touches once no
 * window of that day is still to page (pending, running or failed), so a day's groups are read
 * once when its last window completes (a backfill pays each row about once), and again only
 * when a later read (the look-back, a re-page) changes them. Returns the groups settled.
 *
 * A leased database lets this through unfenced (a select: fenced-database.ts `readsOnly`), and
 * that is safe: settling stores the value the view already shows, computed from committed rows
 * under the groups' locks, so a process that lost its lease can only store the same value.
 */
export async function settleRollupOfWindow(
  db: Executor,
  window: { start: Date; end: Date },
): Promise<number> {
  const { rows } = await sql<{ settled: number | null }>`
    select sum(rewards.settle_check_ins_daily(d.day, d.day + 1))::int as settled
    from (
      select day::date as day from generate_series(
        (${window.start}::timestamptz at time zone 'UTC')::date,
        ((${window.end}::timestamptz - interval '1 microsecond') at time zone 'UTC')::date,
        interval '1 day') as day
    ) d
    where not exists (
      select 1 from rewards.sync_windows w
      where w.stream = ${CHECKINS_STREAM} and w.status <> 'complete'
        and w.window_start < ((d.day + 1)::timestamp at time zone 'UTC')
        and w.window_end > (d.day::timestamp at time zone 'UTC'))`.execute(db);
  return rows[0]?.settled ?? 0;
}

/**
 * Compares rewards.check_ins_daily with a from-scratch aggregation of the rows for the UTC days
 * [from, to) (YYYY-MM-DD): `verify`'s rollup check, on what readers of the view see (an
 * unsettled median is the rows' own, so only its counts can differ). Reads the days' rows through the created_at index (their
 * partitions only) and the rollup's primary key.
 */
export async function compareRollupWithRows(
  db: Executor,
  from: string,
  to: string,
): Promise<RollupDifference[]> {
  const { rows } = await sql<{
    day: string;
    restaurant_id: string;
    location_id: string;
    r_check_ins: number | null;
    r_pay: number | null;
    r_median: number | null;
    s_check_ins: number | null;
    s_pay: number | null;
    s_median: number | null;
  }>`
    with scratch as (${fromScratch(from, to)}),
    rollup as (
      select * from rewards.check_ins_daily_rollup where day >= ${from}::date and day < ${to}::date
    )
    select to_char(coalesce(r.day, s.day), 'YYYY-MM-DD') as day,
      coalesce(r.restaurant_id, s.restaurant_id) as restaurant_id,
      coalesce(r.location_id, s.location_id) as location_id,
      r.check_ins as r_check_ins, r.svc_pay_check_ins as r_pay,
      -- the view's value: an unsettled median is the rows' own (read at query time)
      case when r.median_settled then r.median_visit_minutes else s.median_visit_minutes end as r_median,
      s.check_ins as s_check_ins, s.svc_pay_check_ins as s_pay, s.median_visit_minutes as s_median
    from rollup r
    full join scratch s on s.day = r.day and s.restaurant_id = r.restaurant_id and s.location_id = r.location_id
    where (r.check_ins, r.svc_pay_check_ins,
           case when r.median_settled then r.median_visit_minutes else s.median_visit_minutes end)
      is distinct from (s.check_ins, s.svc_pay_check_ins, s.median_visit_minutes)
    order by 1, 2, 3`.execute(db);
  return rows.map((row) => ({
    day: row.day,
    restaurantId: row.restaurant_id,
    locationId: row.location_id,
    rollup:
      row.r_check_ins === null
        ? null
        : { checkIns: row.r_check_ins, svcPay: row.r_pay ?? 0, median: row.r_median },
    rows:
      row.s_check_ins === null
        ? null
        : { checkIns: row.s_check_ins, svcPay: row.s_pay ?? 0, median: row.s_median },
  }));
}

/**
 * Rebuilds check_ins_daily for the UTC days [from, to) from the rows (`verify --repair`, and
 * after a bulk load that bypassed the triggers). The rollup is locked against writers first
 * (SHARE ROW EXCLUSIVE: page commits wait for the rebuild, and the rebuild waits for commits in
 * flight), so no delta lands between the aggregation and its write.
 */
export async function rebuildRollupDays(db: Kysely<DB>, from: string, to: string): Promise<number> {
  return db.transaction().execute(async (trx) => {
    await sql`lock table rewards.check_ins_daily_rollup in share row exclusive mode`.execute(trx);
    await sql`delete from rewards.check_ins_daily_rollup where day >= ${from}::date and day < ${to}::date`.execute(
      trx,
    );
    const written = await sql`
      insert into rewards.check_ins_daily_rollup
        (day, restaurant_id, location_id, check_ins, svc_pay_check_ins, median_visit_minutes)
      ${fromScratch(from, to)}`.execute(trx);
    return Number(written.numAffectedRows ?? 0);
  });
}
