import { sql, type Kysely } from 'kysely';

// Issue 39: a first-read page counts its own rows into the rollups, so the insert trigger does not
// aggregate them again.
//
// The insert trigger of migration 0009 grouped every inserted row by (day, restaurant, location)
// and by first-seen hour: about 2 µs of Postgres CPU a row, a quarter of what one COPY of the same
// row costs (bench/write-path-parts.ts). A window's first read (checkInInsert) knows its rows
// before it writes them: the pipeline groups them (src/warehouse/check-ins-daily-delta.ts, a few
// dozen groups a page) and the page statement passes those groups to
// rewards.check_ins_count_page, which applies them as the trigger would and leaves, for this
// transaction, the number of rows it counted in `rewards.check_ins_counted`. The insert trigger
// then only compares that number with its transition table's row count and clears it:
// - equal: the rows are counted, nothing more to do;
// - different: the statement fails (a page that counted rows it did not write, or the reverse,
//   would make check_ins_daily wrong; nothing of it is kept);
// - not set (every other insert: the upsert's new and moved rows, a hand-written INSERT): the
//   trigger counts the rows itself, as before.
// The value is transaction-local (set_config(..., true)) and cleared by the first insert trigger
// after it, so it never reaches another statement's rows.

// The insert trigger's own count of a statement's rows, as migration 0009 wrote it: what runs when
// no page counted them (and, after `down`, always).
const COUNT_INSERTED_ROWS = sql`
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
      if h.hour is not null then perform rewards.check_ins_hourly_apply(h.hour, h.n); end if;`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function rewards.check_ins_count_page(
      p_day date[], p_restaurant uuid[], p_location uuid[], p_rows integer[], p_pay integer[], p_median boolean[],
      p_first_seen timestamptz
    ) returns integer language plpgsql as $fn$
    declare total integer;
    begin
      select coalesce(sum(n), 0) into total from unnest(p_rows) as n;
      if exists (select 1 from unnest(p_rows) as n where n <= 0) then
        raise exception 'check_ins_count_page counts inserted rows only (every group''s count must be positive)';
      end if;
      perform rewards.check_ins_daily_apply(p_day, p_restaurant, p_location, p_rows, p_pay, p_median);
      perform rewards.check_ins_hourly_apply(
        array[floor(extract(epoch from p_first_seen) / 3600)::bigint], array[total::bigint]);
      perform set_config('rewards.check_ins_counted', total::text, true);
      return total;
    end
    $fn$;

    create or replace function rewards.check_ins_after_insert() returns trigger language plpgsql as $fn$
    declare d record; h record; counted text := current_setting('rewards.check_ins_counted', true);
    begin
      if counted is not null and counted <> '' then
        perform set_config('rewards.check_ins_counted', '', true);
        if counted::bigint <> (select count(*) from new_rows) then
          raise exception 'check_ins: the statement counted % rows into the rollups but inserted %',
            counted, (select count(*) from new_rows);
        end if;
        return null;
      end if;
      ${COUNT_INSERTED_ROWS}
      return null;
    end
    $fn$;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function rewards.check_ins_after_insert() returns trigger language plpgsql as $fn$
    declare d record; h record;
    begin
      ${COUNT_INSERTED_ROWS}
      return null;
    end
    $fn$;
    drop function rewards.check_ins_count_page(date[], uuid[], uuid[], integer[], integer[], boolean[], timestamptz);
  `.execute(db);
}
