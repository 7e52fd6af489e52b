import { sql, type Kysely } from 'kysely';

// Issue 39: a page's write costs O(its own rows), whatever a (day, location) group already holds.
//
// - check_ins_daily keeps its name, columns and exact values. The triggers of migration 0009 keep
//   the counts by delta, as before, but no longer recompute a group's median from all of its rows
//   on every statement that touches it (a busy venue's day was re-read by every page landing in
//   it: quadratic in its daily check-ins). A statement that changes a group's set of ended live
//   visits marks the group's median unsettled instead (one row, already written for its counts).
//   The view reads an unsettled group's median from its rows at read time (through
//   check_ins_location_created_idx, for that group only), so readers always see exact values.
// - rewards.settle_check_ins_daily(from, to) recomputes the unsettled medians of the days
//   [from, to) once: the check-in stream calls it when a window completes, for the window's days
//   (src/streams/checkins/complete-window.ts), and `verify` calls it before it compares the rollup
//   with the rows. It locks the groups first (key order, as the page triggers do) and computes in
//   a later statement, whose snapshot sees every writer that held those rows before it; a writer
//   after it marks the group unsettled again.
// - check_ins_id_idx goes: the primary key (id, created_at) leads with id and serves the same
//   probes (joins by id, refreshRefusedSightings), and a page paid one more index entry per row.
// - leases gets a unique key on (name, token), so that `token` is a key column: the fencing check
//   locks lease rows FOR KEY SHARE (src/warehouse/leases.ts), which a renewal (an update of
//   expires_at only, FOR NO KEY UPDATE) never waits for, while a taker's update of the token (a
//   key update) still waits until the page statement holding the check commits.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table rewards.check_ins_daily_rollup add column median_settled boolean not null default true;

    create or replace function rewards.check_ins_daily_apply(
      p_day date[], p_restaurant uuid[], p_location uuid[], p_rows integer[], p_pay integer[], p_median boolean[]
    ) returns void language plpgsql as $fn$
    begin
      insert into rewards.check_ins_daily_rollup as r
        (day, restaurant_id, location_id, check_ins, svc_pay_check_ins, median_settled)
      select t.day, t.restaurant_id, t.location_id, t.n, t.pay, not t.median
      from unnest(p_day, p_restaurant, p_location, p_rows, p_pay, p_median)
        as t(day, restaurant_id, location_id, n, pay, median)
      order by 1, 2, 3
      on conflict (day, restaurant_id, location_id) do update
        set check_ins = r.check_ins + excluded.check_ins,
            svc_pay_check_ins = r.svc_pay_check_ins + excluded.svc_pay_check_ins,
            median_settled = r.median_settled and excluded.median_settled;

      if exists (select 1 from unnest(p_rows) as n where n <= 0) then
        delete from rewards.check_ins_daily_rollup r
        using unnest(p_day, p_restaurant, p_location) as t(day, restaurant_id, location_id)
        where r.day = t.day and r.restaurant_id = t.restaurant_id and r.location_id = t.location_id
          and r.check_ins <= 0;
      end if;
    end
    $fn$;

    create function rewards.settle_check_ins_daily(p_from date, p_to date) returns integer
      language plpgsql as $fn$
    declare
      k record;
      settled integer;
    begin
      select array_agg(day) as day, array_agg(restaurant_id) as restaurant, array_agg(location_id) as location
      into k
      from (
        select day, restaurant_id, location_id from rewards.check_ins_daily_rollup
        where day >= p_from and day < p_to and not median_settled
        order by 1, 2, 3
        for update
      ) locked;
      if k.day is null then return 0; end if;
      -- A new statement, so a new snapshot: taken after the locks, it sees every commit of a
      -- writer that held these groups before; only the locked groups are written.
      update rewards.check_ins_daily_rollup r set
        median_settled = true,
        median_visit_minutes = (
          select percentile_cont(0.5) within group (order by extract(epoch from (c.ended_at - c.created_at)) / 60.0)
          from rewards.check_ins c
          where c.location_id = r.location_id and c.restaurant_id = r.restaurant_id
            and c.created_at >= (r.day::timestamp at time zone 'UTC')
            and c.created_at < ((r.day + 1)::timestamp at time zone 'UTC')
            and c.deleted_at is null and c.ended_at is not null)
      from unnest(k.day, k.restaurant, k.location) as t(day, restaurant_id, location_id)
      where r.day = t.day and r.restaurant_id = t.restaurant_id and r.location_id = t.location_id;
      get diagnostics settled = row_count;
      return settled;
    end
    $fn$;

    create or replace view rewards.check_ins_daily as
      select r.day, r.restaurant_id, r.location_id, r.check_ins, r.svc_pay_check_ins,
        case when r.median_settled then r.median_visit_minutes else (
          select percentile_cont(0.5) within group (order by extract(epoch from (c.ended_at - c.created_at)) / 60.0)
          from rewards.check_ins c
          where c.location_id = r.location_id and c.restaurant_id = r.restaurant_id
            and c.created_at >= (r.day::timestamp at time zone 'UTC')
            and c.created_at < ((r.day + 1)::timestamp at time zone 'UTC')
            and c.deleted_at is null and c.ended_at is not null)
        end as median_visit_minutes
      from rewards.check_ins_daily_rollup r;

    drop index if exists rewards.check_ins_id_idx;

    create unique index leases_name_token_key on rewards.leases (name, token);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop index rewards.leases_name_token_key;
    create index check_ins_id_idx on rewards.check_ins (id);

    select rewards.settle_check_ins_daily('-infinity', 'infinity');
    create or replace view rewards.check_ins_daily as
      select day, restaurant_id, location_id, check_ins, svc_pay_check_ins, median_visit_minutes
      from rewards.check_ins_daily_rollup;
    drop function rewards.settle_check_ins_daily(date, date);

    create or replace function rewards.check_ins_daily_apply(
      p_day date[], p_restaurant uuid[], p_location uuid[], p_rows integer[], p_pay integer[], p_median boolean[]
    ) returns void language plpgsql as $fn$
    begin
      insert into rewards.check_ins_daily_rollup as r (day, restaurant_id, location_id, check_ins, svc_pay_check_ins)
      select t.day, t.restaurant_id, t.location_id, t.n, t.pay
      from unnest(p_day, p_restaurant, p_location, p_rows, p_pay) as t(day, restaurant_id, location_id, n, pay)
      order by 1, 2, 3
      on conflict (day, restaurant_id, location_id) do update
        set check_ins = r.check_ins + excluded.check_ins,
            svc_pay_check_ins = r.svc_pay_check_ins + excluded.svc_pay_check_ins;

      update rewards.check_ins_daily_rollup r set median_visit_minutes = (
        select percentile_cont(0.5) within group (order by extract(epoch from (c.ended_at - c.created_at)) / 60.0)
        from rewards.check_ins c
        where c.location_id = r.location_id and c.restaurant_id = r.restaurant_id
          and c.created_at >= (r.day::timestamp at time zone 'UTC')
          and c.created_at < ((r.day + 1)::timestamp at time zone 'UTC')
          and c.deleted_at is null and c.ended_at is not null)
      from unnest(p_day, p_restaurant, p_location, p_median) as t(day, restaurant_id, location_id, median)
      where t.median and r.day = t.day and r.restaurant_id = t.restaurant_id and r.location_id = t.location_id;

      delete from rewards.check_ins_daily_rollup r
      using unnest(p_day, p_restaurant, p_location) as t(day, restaurant_id, location_id)
      where r.day = t.day and r.restaurant_id = t.restaurant_id and r.location_id = t.location_id
        and r.check_ins <= 0;
    end
    $fn$;
    alter table rewards.check_ins_daily_rollup drop column median_settled;
  `.execute(db);
}
