import { sql, type Kysely } from 'kysely';
import { partitionsPastRetention, retentionCutoff } from '../sync/retention.js';
import { listCheckInPartitions } from './check-in-partitions.js';
import type { DB } from './schema.js';
import { CHECKINS_STREAM } from './sync-window-reads.js';

export interface RetentionSettings {
  retentionMs: number | undefined;
  rollupRetentionMs: number | undefined;
}

export interface RetentionOutcome {
  droppedPartitions: { name: string; rows: number }[];
  windowsRemoved: number;
  rollupRowsRemoved: number;
}

const NOTHING: RetentionOutcome = { droppedPartitions: [], windowsRemoved: 0, rollupRowsRemoved: 0 };

/**
 * Applies CHECKINS_RETENTION and CHECKINS_ROLLUP_RETENTION (docs/warehouse-scale.md#retention):
 * drops the month partitions of check_ins wholly past the cutoff (DROP TABLE: no row-by-row
 * delete, no vacuum debt, and the rollup keeps its rows because no trigger fires), forgets the
 * sync windows that end before the cutoff (so they are never verified or counted as unfinished,
 * and the watermark moves past them), and deletes check_ins_daily rows past the rollup's own
 * cutoff. Each removal is logged in rewards.retention_log, which `status` reads. One transaction
 * per partition: a failure keeps what was already done.
 */
export async function applyCheckInsRetention(
  db: Kysely<DB>,
  now: Date,
  settings: RetentionSettings,
): Promise<RetentionOutcome> {
  const cutoff = retentionCutoff(now.getTime(), settings.retentionMs);
  if (cutoff === null) return NOTHING;
  const outcome: RetentionOutcome = { droppedPartitions: [], windowsRemoved: 0, rollupRowsRemoved: 0 };
  for (const partition of partitionsPastRetention(await listCheckInPartitions(db), cutoff)) {
    const rows = await db.transaction().execute(async (trx) => {
      // The count reads the doomed partition once, under the lock the drop takes anyway.
      await sql`lock table ${sql.id('rewards', partition.name)} in access exclusive mode`.execute(trx);
      const { rows: counted } = await sql<{ n: string }>`
        select count(*) as n from ${sql.id('rewards', partition.name)}`.execute(trx);
      const n = Number(counted[0]?.n ?? 0);
      await sql`drop table ${sql.id('rewards', partition.name)}`.execute(trx);
      await trx
        .insertInto('rewards.retention_log')
        .values({
          target: 'check_ins',
          range_start: new Date(partition.start),
          range_end: new Date(partition.end),
          rows: n,
          removed_at: now,
        })
        .execute();
      return n;
    });
    outcome.droppedPartitions.push({ name: partition.name, rows });
    // The id directory's entries of that month, after the drop and outside its lock: until then
    // they only point at rows that are gone, which the page upsert reads as "not stored".
    await sql`delete from rewards.check_in_ids
              where created_at >= ${new Date(partition.start)} and created_at < ${new Date(partition.end)}`.execute(
      db,
    );
  }
  outcome.windowsRemoved = await forgetWindowsBefore(db, new Date(cutoff), now);
  const rollupCutoff = retentionCutoff(now.getTime(), settings.rollupRetentionMs);
  if (rollupCutoff !== null)
    outcome.rollupRowsRemoved = await deleteRollupBefore(db, new Date(rollupCutoff), now);
  return outcome;
}

/** Removes the check-in windows ending at or before `cutoff`, and moves the watermark past them. */
async function forgetWindowsBefore(db: Kysely<DB>, cutoff: Date, now: Date): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const removed = await trx
      .deleteFrom('rewards.sync_windows')
      .where('stream', '=', CHECKINS_STREAM)
      .where('window_end', '<=', cutoff)
      .returning(['window_start', 'window_end'])
      .execute();
    if (removed.length === 0) return 0;
    const first = removed.reduce((min, row) => (row.window_start < min ? row.window_start : min), cutoff);
    const last = removed.reduce((max, row) => (row.window_end > max ? row.window_end : max), first);
    // Everything before the last removed window's end is out of retention: nothing left to wait for.
    await trx
      .updateTable('rewards.sync_state')
      .set({ watermark: sql<Date>`greatest(watermark, ${last}::timestamptz)`, updated_at: now })
      .where('stream', '=', CHECKINS_STREAM)
      .where('watermark', 'is not', null)
      .execute();
    await trx
      .insertInto('rewards.retention_log')
      .values({
        target: 'sync_windows',
        range_start: first,
        range_end: last,
        rows: removed.length,
        removed_at: now,
      })
      .execute();
    return removed.length;
  });
}

async function deleteRollupBefore(db: Kysely<DB>, cutoff: Date, now: Date): Promise<number> {
  const day = cutoff.toISOString().slice(0, 10);
  return db.transaction().execute(async (trx) => {
    const result = await trx
      .deleteFrom('rewards.check_ins_daily_rollup')
      .where('day', '<', sql<Date>`${day}::date`)
      .executeTakeFirst();
    const n = Number(result.numDeletedRows);
    if (n > 0) {
      await trx
        .insertInto('rewards.retention_log')
        .values({
          target: 'check_ins_daily',
          range_start: null,
          range_end: new Date(`${day}T00:00:00Z`),
          rows: n,
          removed_at: now,
        })
        .execute();
    }
    return n;
  });
}

export interface RetentionSummary {
  /** What retention removed, per target: rows in all, and the newest range end. */
  targets: { target: string; rows: number; removals: number; through: string; lastAt: string }[];
}

/** For `status`: per target, the rows removed in all and up to where (the log is one row per removal). */
export async function readRetentionSummary(db: Kysely<DB>): Promise<RetentionSummary> {
  const rows = await db
    .selectFrom('rewards.retention_log')
    .select((eb) => [
      'target',
      eb.fn.sum<string>('rows').as('rows'),
      eb.fn.countAll<string>().as('removals'),
      eb.fn.max('range_end').as('through'),
      eb.fn.max('removed_at').as('last_at'),
    ])
    .groupBy('target')
    .orderBy('target')
    .execute();
  return {
    targets: rows.map((row) => ({
      target: row.target,
      rows: Number(row.rows),
      removals: Number(row.removals),
      through: row.through.toISOString(),
      lastAt: row.last_at.toISOString(),
    })),
  };
}
