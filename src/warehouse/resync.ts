import { sql } from 'kysely';
import type { ResyncRange } from '../sync/resync-plan.js';
import type { Executor } from './database.js';
import type { SyncWindow } from './schema.js';
import { CHECKINS_STREAM } from './sync-window-reads.js';

/** Check-in windows holding any instant of the range (a window only partly inside it too), oldest first. */
export async function windowsOverlapping(db: Executor, range: ResyncRange): Promise<SyncWindow[]> {
  let query = db.selectFrom('rewards.sync_windows').selectAll().where('stream', '=', CHECKINS_STREAM);
  if (range.to !== null) query = query.where('window_start', '<', new Date(range.to));
  if (range.from !== null) query = query.where('window_end', '>', new Date(range.from));
  return query.orderBy('window_start').execute();
}

/** Stored payment intents created in the range, and those with no created_at (the plan decides). */
export async function storedIntentRefs(
  db: Executor,
  range: ResyncRange,
): Promise<Array<{ id: string; createdAt: number | null }>> {
  let query = db.selectFrom('rewards.payment_intents').select(['id', 'created_at']);
  if (range.from !== null || range.to !== null) {
    query = query.where((eb) =>
      eb.or([
        eb('created_at', 'is', null),
        eb.and([
          ...(range.from === null ? [] : [eb('created_at', '>=', new Date(range.from))]),
          ...(range.to === null ? [] : [eb('created_at', '<', new Date(range.to))]),
        ]),
      ]),
    );
  }
  const rows = await query
    .orderBy(sql`created_at nulls last`)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({ id: row.id, createdAt: row.created_at?.getTime() ?? null }));
}
