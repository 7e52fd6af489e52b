import { sql, type Kysely } from 'kysely';

// rewards.check_ins_daily keeps its name and columns but reads a table maintained incrementally
// (docs/warehouse-scale.md): statement-level triggers on check_ins turn each statement's changed
// rows (transition tables) into per-(day, restaurant, location) deltas, in the same transaction
// as the rows, whoever writes them (page upserts, look-back updates of ended_at, deletion marks,
// moves). The median visit length cannot be updated by delta: it is recomputed from the rows for
// the groups whose set of ended live visits changed. Groups are locked in key order (one sorted
// upsert) so two page commits touching the same days cannot deadlock, and a recompute always
// runs under its group's row lock, after any earlier writer of that group has committed.
//
// check_ins_first_seen_hourly counts rows by the hour they were first written (the status page's
// chart), sharded by backend so concurrent page commits do not queue on one row.
// retention_log records what retention removed (status shows it).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table rewards.check_ins_daily_rollup (
      day date not null,
      restaurant_id uuid not null,
      location_id uuid not null,
      check_ins integer not null,
      svc_pay_check_ins integer not null,
      median_visit_minutes double precision,
      primary key (day, restaurant_id, location_id)
    );

    create table rewards.check_ins_first_seen_hourly (
      hour bigint not null,
      shard smallint not null,
      rows bigint not null,
      primary key (hour, shard)
    );

    create table rewards.retention_log (
      id bigserial primary key,
      target text not null,
      range_start timestamptz,
      range_end timestamptz not null,
      rows bigint not null,
      removed_at timestamptz not null default now()
    );
    create index retention_log_target_idx on rewards.retention_log (target, removed_at desc);

    create function rewards.check_ins_daily_apply(
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

    create function rewards.check_ins_hourly_apply(p_hour bigint[], p_rows bigint[]) returns void
      language sql as $fn$
      insert into rewards.check_ins_first_seen_hourly as h (hour, shard, rows)
      select t.hour, (pg_backend_pid() % 8)::smallint, t.n
      from unnest(p_hour, p_rows) as t(hour, n)
      order by 1
      on conflict (hour, shard) do update set rows = h.rows + excluded.rows
    $fn$;

    create function rewards.check_ins_after_insert() returns trigger language plpgsql as $fn$
    declare d record; h record;
    begin
      select array_agg(day) as day, array_agg(restaurant_id) as restaurant, array_agg(location_id) as location,
             array_agg(n) as n, array_agg(pay) as pay, array_agg(median) as median into d
      from (
        select (created_at at time zone 'UTC')::date as day, restaurant_id, location_id,
               count(*)::integer as n, (count(*) filter (where svc_pay_enabled))::integer as pay,
               bool_or(ended_at is not null) as median
        from new_rows where deleted_at is null group by 1, 2, 3
      ) g;
      if d.day is not null then
        perform rewards.check_ins_daily_apply(d.day, d.restaurant, d.location, d.n, d.pay, d.median);
      end if;
      select array_agg(hour) as hour, array_agg(n) as n into h
      from (select floor(extract(epoch from first_seen_at) / 3600)::bigint as hour, count(*) as n
            from new_rows group by 1) g;
      if h.hour is not null then perform rewards.check_ins_hourly_apply(h.hour, h.n); end if;
      return null;
    end
    $fn$;

    create function rewards.check_ins_after_delete() returns trigger language plpgsql as $fn$
    declare d record; h record;
    begin
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

    -- An update changes counts when a row turns live or deleted or changes group, and the median
    -- when the set of ended live visits of a group changes; a re-sighting (last_seen_at only)
    -- changes neither and writes nothing here, so look-back re-reads stay cheap.
    create function rewards.check_ins_after_update() returns trigger language plpgsql as $fn$
    declare d record;
    begin
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

    create trigger check_ins_rollup_insert after insert on rewards.check_ins
      referencing new table as new_rows for each statement execute function rewards.check_ins_after_insert();
    create trigger check_ins_rollup_update after update on rewards.check_ins
      referencing old table as old_rows new table as new_rows
      for each statement execute function rewards.check_ins_after_update();
    create trigger check_ins_rollup_delete after delete on rewards.check_ins
      referencing old table as old_rows for each statement execute function rewards.check_ins_after_delete();

    -- From scratch, once: the rows already there.
    insert into rewards.check_ins_daily_rollup
      (day, restaurant_id, location_id, check_ins, svc_pay_check_ins, median_visit_minutes)
    select
      (created_at at time zone 'UTC')::date, restaurant_id, location_id,
      count(*)::integer, (count(*) filter (where svc_pay_enabled))::integer,
      percentile_cont(0.5) within group (order by extract(epoch from (ended_at - created_at)) / 60.0)
        filter (where ended_at is not null)
    from rewards.check_ins where deleted_at is null group by 1, 2, 3;

    insert into rewards.check_ins_first_seen_hourly (hour, shard, rows)
    select floor(extract(epoch from first_seen_at) / 3600)::bigint, 0, count(*)
    from rewards.check_ins where first_seen_at >= now() - interval '7 days' group by 1;

    create or replace view rewards.check_ins_daily as
      select day, restaurant_id, location_id, check_ins, svc_pay_check_ins, median_visit_minutes
      from rewards.check_ins_daily_rollup;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace view rewards.check_ins_daily as
      select
        (created_at at time zone 'UTC')::date as day,
        restaurant_id,
        location_id,
        count(*)::integer as check_ins,
        (count(*) filter (where svc_pay_enabled))::integer as svc_pay_check_ins,
        percentile_cont(0.5) within group (order by extract(epoch from (ended_at - created_at)) / 60.0)
          filter (where ended_at is not null) as median_visit_minutes
      from rewards.check_ins
      where deleted_at is null
      group by 1, 2, 3;
    drop trigger check_ins_rollup_insert on rewards.check_ins;
    drop trigger check_ins_rollup_update on rewards.check_ins;
    drop trigger check_ins_rollup_delete on rewards.check_ins;
    drop function rewards.check_ins_after_insert();
    drop function rewards.check_ins_after_update();
    drop function rewards.check_ins_after_delete();
    drop function rewards.check_ins_hourly_apply(bigint[], bigint[]);
    drop function rewards.check_ins_daily_apply(date[], uuid[], uuid[], integer[], integer[], boolean[]);
    drop table rewards.retention_log;
    drop table rewards.check_ins_first_seen_hourly;
    drop table rewards.check_ins_daily_rollup;
  `.execute(db);
}
