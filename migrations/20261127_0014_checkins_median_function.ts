import { sql, type Kysely } from 'kysely';

// One definition of a (day, restaurant, location) group's median visit length. Migration 0013
// wrote the same percentile_cont subquery twice, in rewards.settle_check_ins_daily (which stores
// it) and in the rewards.check_ins_daily view (which reads an unsettled group's median from its
// rows): two copies that had to stay equal for the rollup to stay exact. Both now call
// rewards.check_ins_daily_median. Values are unchanged: the same expression, the same rows.
//
// The function is `stable` (it reads check_ins) and `strict` (no group, no median); its WHERE is
// the one of 0013, so it probes check_ins_location_created_idx for the one group, in the month
// partition(s) of that day (bounds are computed from the parameters at execution, so pruning
// happens at run time).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function rewards.check_ins_daily_median(p_day date, p_restaurant uuid, p_location uuid)
      returns double precision language sql stable strict parallel safe as $fn$
      select percentile_cont(0.5) within group (order by extract(epoch from (c.ended_at - c.created_at)) / 60.0)
      from rewards.check_ins c
      where c.location_id = p_location and c.restaurant_id = p_restaurant
        and c.created_at >= (p_day::timestamp at time zone 'UTC')
        and c.created_at < ((p_day + 1)::timestamp at time zone 'UTC')
        and c.deleted_at is null and c.ended_at is not null
    $fn$;

    create or replace function rewards.settle_check_ins_daily(p_from date, p_to date) returns integer
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
        median_visit_minutes = rewards.check_ins_daily_median(r.day, r.restaurant_id, r.location_id)
      from unnest(k.day, k.restaurant, k.location) as t(day, restaurant_id, location_id)
      where r.day = t.day and r.restaurant_id = t.restaurant_id and r.location_id = t.location_id;
      get diagnostics settled = row_count;
      return settled;
    end
    $fn$;

    create or replace view rewards.check_ins_daily as
      select r.day, r.restaurant_id, r.location_id, r.check_ins, r.svc_pay_check_ins,
        case when r.median_settled then r.median_visit_minutes
          else rewards.check_ins_daily_median(r.day, r.restaurant_id, r.location_id)
        end as median_visit_minutes
      from rewards.check_ins_daily_rollup r;
  `.execute(db);
}

/** Back to 0013's two inline copies, then the function goes. */
export async function down(db: Kysely<any>): Promise<void> {
  await sql`
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

    create or replace function rewards.settle_check_ins_daily(p_from date, p_to date) returns integer
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

    drop function rewards.check_ins_daily_median(date, uuid, uuid);
  `.execute(db);
}
