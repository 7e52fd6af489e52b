import { sql, type Kysely } from 'kysely';

// A check-in is never removed on one read's word: rows a consistent paging did not meet are first
// suspected (sync_windows.drop_suspected_at), and only a second read CHECKINS_DELETE_CONFIRM_AFTER
// later marks them deleted_at. Marked, not removed: first_seen_at and history survive, and a row
// seen again is live again. The daily view counts live rows only.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table rewards.check_ins add column deleted_at timestamptz;
    alter table rewards.sync_windows add column drop_suspected_at timestamptz;
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
      group by 1, 2, 3;
    alter table rewards.sync_windows drop column drop_suspected_at;
    alter table rewards.check_ins drop column deleted_at;
  `.execute(db);
}
