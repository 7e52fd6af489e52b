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

    -- A page statement holds an upsert and a move (delete) for the ids the warehouse already has,
    -- so the update and delete triggers fire on every page, nearly always with no row: they
    -- return at once then, instead of grouping empty transition tables.
    create or replace function rewards.check_ins_after_delete() returns trigger language plpgsql as $fn$
    declare d record; h record;
    begin
      if not exists (select 1 from old_rows) then return null; end if;
      select array_agg(day) as day, array_agg(restaurant_id) as restaurant, array_agg(location_id) as location,
             array_agg(n) as n, array_agg(pay) as pay, array_agg(median) as median into d
      from (
        select (created_at at time zone 'UTC')::date as day, restaurant_id, location_id,
               -count(*)::integer as n, -(count(*) filter (where svc_pay_enabled))::integer as pay,
               bool_or(ended_at is not null) as median
        from old_rows where deleted_at is null group by 1, 2, 3
      ) g;
      if d.day is not null then
        perform rewards.check_ins_daily_apply(d.day, d.restaurant, d.location, d.n, d.pay, d.median);
      end if;
      select array_agg(hour) as hour, array_agg(n) as n into h
      from (select floor(extract(epoch from first_seen_at) / 3600)::bigint as hour, -count(*) as n
            from old_rows group by 1) g;
      if h.hour is not null then perform rewards.check_ins_hourly_apply(h.hour, h.n); end if;
      return null;
    end
    $fn$;

    create or replace function rewards.check_ins_after_update() returns trigger language plpgsql as $fn$
    declare d record;
    begin
      if not exists (select 1 from new_rows) then return null; end if;
      with delta as (
        select day, restaurant_id, location_id, sum(n)::integer as n, sum(pay)::integer as pay
        from (
          select (created_at at time zone 'UTC')::date as day, restaurant_id, location_id,
                 1 as n, svc_pay_enabled::integer as pay
          from new_rows where deleted_at is null
          union all
          select (created_at at time zone 'UTC')::date, restaurant_id, location_id,
                 -1, -(svc_pay_enabled::integer)
          from old_rows where deleted_at is null
        ) u group by 1, 2, 3
      ),
      changed as (
        select o.created_at as o_created, o.restaurant_id as o_restaurant, o.location_id as o_location,
               n.created_at as n_created, n.restaurant_id as n_restaurant, n.location_id as n_location
        from old_rows o join new_rows n on n.id = o.id
        where (o.ended_at is not null or n.ended_at is not null)
          and (o.ended_at, o.deleted_at, o.created_at, o.location_id, o.restaurant_id)
              is distinct from (n.ended_at, n.deleted_at, n.created_at, n.location_id, n.restaurant_id)
      ),
      median as (
        select (o_created at time zone 'UTC')::date as day, o_restaurant as restaurant_id, o_location as location_id
        from changed
        union
        select (n_created at time zone 'UTC')::date, n_restaurant, n_location from changed
      ),
      groups as (
        select coalesce(dl.day, m.day) as day, coalesce(dl.restaurant_id, m.restaurant_id) as restaurant_id,
               coalesce(dl.location_id, m.location_id) as location_id,
               coalesce(dl.n, 0) as n, coalesce(dl.pay, 0) as pay, m.day is not null as median
        from delta dl
        full join median m on m.day = dl.day and m.restaurant_id = dl.restaurant_id and m.location_id = dl.location_id
      )
      select array_agg(day) as day, array_agg(restaurant_id) as restaurant, array_agg(location_id) as location,
             array_agg(n) as n, array_agg(pay) as pay, array_agg(median) as median into d
      from groups where n <> 0 or pay <> 0 or median;
      if d.day is not null then
        perform rewards.check_ins_daily_apply(d.day, d.restaurant, d.location, d.n, d.pay, d.median);
      end if;
      return null;
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
