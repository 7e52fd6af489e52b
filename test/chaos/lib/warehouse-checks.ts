import { sql, type Kysely } from 'kysely';
import type { DB } from '../../../src/warehouse/schema.js';

export interface CheckInTally {
  rows: number;
  distinct: number;
}

/** Rows and distinct ids of check_ins in [from, to). */
export async function tallyCheckIns(db: Kysely<DB>, from: Date, to: Date): Promise<CheckInTally> {
  const row = await db
    .selectFrom('rewards.check_ins')
    .select([sql<string>`count(*)`.as('rows'), sql<string>`count(distinct id)`.as('distinct')])
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .executeTakeFirstOrThrow();
  return { rows: Number(row.rows), distinct: Number(row.distinct) };
}

/** Window counts by status. */
export async function windowStatuses(db: Kysely<DB>): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom('rewards.sync_windows')
    .select(['status', sql<string>`count(*)`.as('n')])
    .where('stream', '=', 'checkins')
    .groupBy('status')
    .execute();
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
}

/** True when every planned window of the range is complete (and there is at least one). */
export async function allWindowsComplete(db: Kysely<DB>, from: Date, to: Date): Promise<boolean> {
  const rows = await db
    .selectFrom('rewards.sync_windows')
    .select([
      'status',
      sql<string>`count(*)`.as('n'),
      sql<Date>`min(window_start)`.as('first'),
      sql<Date>`max(window_end)`.as('last'),
    ])
    .where('stream', '=', 'checkins')
    .where('window_start', '>=', from)
    .where('window_end', '<=', to)
    .groupBy('status')
    .execute();
  if (rows.length !== 1 || rows[0]?.status !== 'complete') return false;
  return (
    new Date(rows[0].first).getTime() === from.getTime() && new Date(rows[0].last).getTime() === to.getTime()
  );
}
