import { sql, type Kysely } from 'kysely';

// check_ins becomes a table partitioned by month of created_at (docs/warehouse-scale.md), so
// retention drops whole months and every window query touches one or two partitions.
//
// - The key is (id, created_at): a partitioned table's unique keys must hold the partition key.
//   rewards.check_in_ids (id primary key, created_at) keeps one row per id; an id that comes back
//   with another created_at is MOVED by the page upsert (deleted from its old month and inserted
//   into the new one in the same statement), never left twice. A plain index on id serves joins
//   by id (member_check_ins shares the id).
// - Month partitions are named check_ins_pYYYYMM and made by rewards.create_check_ins_month(),
//   which the check-in pass calls for the months its windows need, before paging them.
//   check_ins_default catches a row of a month nobody created (never refused); creating that
//   month later moves such rows into their partition.
// - The existing table is converted in place: renamed, its rows copied into the month partitions
//   (indexes built after the copy, which is faster), then dropped. It runs inside migrate's one
//   transaction under its lock, so concurrent migrators wait and a failure leaves the old table
//   as it was; a table that is already partitioned is left alone (safe to re-run).
export async function up(db: Kysely<any>): Promise<void> {
  const { rows } = await sql<{ relkind: string }>`
    select c.relkind from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'rewards' and c.relname = 'check_ins'`.execute(db);
  if (rows[0]?.relkind === 'p') return;

  await sql`
    set local maintenance_work_mem = '256MB';

    create function rewards.check_ins_month_name(month date) returns text
      language sql immutable as $fn$ select 'check_ins_p' || to_char(month, 'YYYYMM') $fn$;

    -- Creates the partition of the month holding month (UTC), when missing; moves into it the rows
    -- check_ins_default holds for that month. Idempotent and safe when several processes race
    -- (a transaction-scoped advisory lock orders them). Returns true when it created the partition.
    create function rewards.create_check_ins_month(month date) returns boolean
      language plpgsql as $fn$
    declare
      first date := date_trunc('month', month)::date;
      lower_bound timestamptz := (first::timestamp at time zone 'UTC');
      upper_bound timestamptz := ((first + interval '1 month')::timestamp at time zone 'UTC');
      name text := rewards.check_ins_month_name(first);
      has_default boolean;
    begin
      if to_regclass('rewards.' || name) is not null then return false; end if;
      perform pg_advisory_xact_lock(7100431029);
      if to_regclass('rewards.' || name) is not null then return false; end if;
      has_default := to_regclass('rewards.check_ins_default') is not null;
      if has_default and exists (
        select 1 from rewards.check_ins_default where created_at >= lower_bound and created_at < upper_bound
      ) then
        -- Rows parked in the default partition: move them into the new month, then attach it.
        execute format('create table rewards.%I (like rewards.check_ins including defaults including constraints)', name);
        execute format(
          'with moved as (delete from rewards.check_ins_default where created_at >= %L and created_at < %L returning *)
           insert into rewards.%I select * from moved', lower_bound, upper_bound, name);
        execute format('alter table rewards.check_ins attach partition rewards.%I for values from (%L) to (%L)',
          name, lower_bound, upper_bound);
      else
        execute format('create table rewards.%I partition of rewards.check_ins for values from (%L) to (%L)',
          name, lower_bound, upper_bound);
      end if;
      return true;
    end
    $fn$;

    drop index rewards.check_ins_created_at_idx;
    drop index rewards.check_ins_restaurant_created_idx;
    drop index rewards.check_ins_location_created_idx;
    drop index rewards.check_ins_ongoing_idx;
    drop index rewards.check_ins_first_seen_idx;
    alter table rewards.check_ins rename to check_ins_unpartitioned;
    alter table rewards.check_ins_unpartitioned rename constraint check_ins_pkey to check_ins_unpartitioned_pkey;

    create table rewards.check_ins
      (like rewards.check_ins_unpartitioned including defaults including constraints)
      partition by range (created_at);
    create table rewards.check_ins_default partition of rewards.check_ins default;

    select rewards.create_check_ins_month(month::date)
    from (
      select distinct date_trunc('month', created_at at time zone 'UTC') as month from rewards.check_ins_unpartitioned
      union select date_trunc('month', now() at time zone 'UTC')
      union select date_trunc('month', now() at time zone 'UTC') + interval '1 month'
    ) months;

    insert into rewards.check_ins select * from rewards.check_ins_unpartitioned;

    alter table rewards.check_ins add primary key (id, created_at);
    -- moves and joins by id (member_check_ins shares it)
    create index check_ins_id_idx on rewards.check_ins (id);
    create index check_ins_created_at_idx on rewards.check_ins (created_at);
    create index check_ins_restaurant_created_idx on rewards.check_ins (restaurant_id, created_at);
    create index check_ins_location_created_idx on rewards.check_ins (location_id, created_at);
    -- the look-back re-reads windows that still hold ongoing visits
    create index check_ins_ongoing_idx on rewards.check_ins (created_at) where ended_at is null;
    create index check_ins_first_seen_idx on rewards.check_ins (first_seen_at);

    -- Re-pointed before the old table goes (the view binds to the table, not its name).
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

    -- One row per id with its current created_at: what keeps an id unique now that the key holds
    -- created_at (the page upsert reads it to move a row whose created_at changed).
    create table rewards.check_in_ids (id uuid not null, created_at timestamptz not null);
    insert into rewards.check_in_ids select id, created_at from rewards.check_ins_unpartitioned;
    alter table rewards.check_in_ids add primary key (id);

    drop table rewards.check_ins_unpartitioned;
    analyze rewards.check_ins;
    analyze rewards.check_in_ids;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create table rewards.check_ins_unpartitioned (like rewards.check_ins including defaults including constraints);
    insert into rewards.check_ins_unpartitioned select * from rewards.check_ins;
    create or replace view rewards.check_ins_daily as
      select
        (created_at at time zone 'UTC')::date as day,
        restaurant_id,
        location_id,
        count(*)::integer as check_ins,
        (count(*) filter (where svc_pay_enabled))::integer as svc_pay_check_ins,
        percentile_cont(0.5) within group (order by extract(epoch from (ended_at - created_at)) / 60.0)
          filter (where ended_at is not null) as median_visit_minutes
      from rewards.check_ins_unpartitioned
      where deleted_at is null
      group by 1, 2, 3;
    drop table rewards.check_ins;
    drop table rewards.check_in_ids;
    drop function rewards.create_check_ins_month(date);
    drop function rewards.check_ins_month_name(date);
    alter table rewards.check_ins_unpartitioned rename to check_ins;
    alter table rewards.check_ins add primary key (id);
    create index check_ins_created_at_idx on rewards.check_ins (created_at);
    create index check_ins_restaurant_created_idx on rewards.check_ins (restaurant_id, created_at);
    create index check_ins_location_created_idx on rewards.check_ins (location_id, created_at);
    create index check_ins_ongoing_idx on rewards.check_ins (created_at) where ended_at is null;
    create index check_ins_first_seen_idx on rewards.check_ins (first_seen_at);
  `.execute(db);
}
