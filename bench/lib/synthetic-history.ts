import { sql, type Kysely } from 'kysely';
import { monthPartitionName, monthsCovering, nextMonthStart } from '../../src/sync/retention.js';
import { listCheckInPartitions } from '../../src/warehouse/check-in-partitions.js';
import { rebuildRollupDays } from '../../src/warehouse/check-ins-daily.js';
import type { DB } from '../../src/warehouse/schema.js';

const DAY_MS = 86_400_000;

export interface SyntheticHistory {
  /** Rows to insert in all. */
  rows: number;
  /** The history ends at this instant (exclusive, rounded down to a day). */
  endBefore: Date;
  /** Days of history, ending at endBefore; rows are spread evenly over them. */
  days: number;
  /** Distinct locations (4 per restaurant). */
  locations?: number;
}

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Fills rewards.check_ins with synthetic history by SQL (generate_series): deterministic
 * locations (md5 of a number), random ids, 3 % of visits still ongoing, the rest 20–140 min,
 * first seen 3 h after they began. A month with no partition yet is loaded the bulk way (a
 * standalone table, filled, then attached: its indexes are built once, by sort, on attach); a
 * month that has one is inserted into through check_ins. The bulk way bypasses the rollup's
 * triggers and the page upsert, so check_ins_daily is rebuilt from the rows for those days and
 * the ids are added to rewards.check_in_ids. Returns the rows
 * written.
 */
export async function fillSyntheticCheckIns(
  db: Kysely<DB>,
  options: SyntheticHistory,
  onMonth?: (month: string, rows: number) => void,
): Promise<number> {
  const locations = options.locations ?? 200;
  const end = Math.floor(options.endBefore.getTime() / DAY_MS) * DAY_MS;
  const start = end - options.days * DAY_MS;
  const perDay = options.rows / options.days;
  const existing = new Set((await listCheckInPartitions(db)).map((p) => p.start));
  let written = 0;
  for (const month of monthsCovering(start, end - 1)) {
    const from = Math.max(start, month);
    const to = Math.min(end, nextMonthStart(month));
    if (from >= to) continue;
    const rows = Math.round(((to - from) / DAY_MS) * perDay);
    const name = monthPartitionName(month);
    const bulk = !existing.has(month);
    const target = bulk ? sql.id('rewards', name) : sql.id('rewards', 'check_ins');
    if (bulk) {
      await sql`create table ${target} (like rewards.check_ins including defaults including constraints)`.execute(
        db,
      );
    }
    await sql`
      insert into ${target}
        (id, location_id, restaurant_id, svc_pay_enabled, created_at, ended_at, first_seen_at, last_seen_at)
      select gen_random_uuid(), md5('loc' || l)::uuid, md5('rest' || (l / 4))::uuid, random() < 0.7,
        c, case when random() < 0.03 then null else c + (20 + random() * 120) * interval '1 minute' end,
        c + interval '3 hours', c + interval '3 hours'
      from (
        select ${new Date(from)}::timestamptz + random() * ${`${(to - from) / 1000} seconds`}::interval as c,
          (g % ${locations}) as l
        from generate_series(1, ${rows}) g
      ) s`.execute(db);
    if (bulk) {
      // DDL takes no parameters: the bounds as literals.
      const lower = sql.lit(new Date(month).toISOString());
      const upper = sql.lit(new Date(nextMonthStart(month)).toISOString());
      await sql`alter table rewards.check_ins attach partition ${target} for values from (${lower}) to (${upper})`.execute(
        db,
      );
      await sql`insert into rewards.check_in_ids select id, created_at from ${target}`.execute(db);
      await rebuildRollupDays(db, iso(from), iso(to));
    }
    written += rows;
    onMonth?.(name, rows);
  }
  // As a warehouse of that size would be: vacuumed and analysed (autovacuum would otherwise run
  // during the measurements that follow).
  await sql`vacuum (analyze) rewards.check_ins, rewards.check_in_ids`.execute(db);
  return written;
}
