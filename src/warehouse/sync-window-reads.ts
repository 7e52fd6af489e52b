import { sql } from 'kysely';
import type { Window } from '../sync/windows.js';
import type { SyncWindow } from './schema.js';
import type { Executor } from './database.js';
import { STREAM_NAME } from '../sync/stream-facts.js';

/** The check-in feed's stream name, as sync_windows, sync_state and rejected_records key its rows. */
export const CHECKINS_STREAM = STREAM_NAME.checkins;

export const windowOf = (row: Pick<SyncWindow, 'window_start' | 'window_end'>): Window => ({
  start: row.window_start.getTime(),
  end: row.window_end.getTime(),
});

// Which check-in windows exist and which are due: the reads of rewards.sync_windows that choose
// what runs. The transitions are in sync-windows.ts.

/**
 * The name of a window's lease (src/leases/lease-names.ts, windowLease) computed in SQL from the
 * row: `checkins-window:<start ms>-<end ms>`.
 */
export const windowLeaseNameSql = sql<string>`'checkins-window:' || (extract(epoch from window_start) * 1000)::bigint || '-' || (extract(epoch from window_end) * 1000)::bigint`;

/**
 * Windows that need paging now: pending, failed and due for retry, or running with no live
 * lease (its holder died or lost it; the next taker resumes from the checkpoint). Due times and
 * lease expiry are compared with Postgres's now(): a worker's clock never decides.
 */
export async function dueWindows(
  db: Executor,
  options: { limit?: number; ignoreBackoff?: boolean } = {},
): Promise<SyncWindow[]> {
  return db
    .selectFrom('rewards.sync_windows')
    .selectAll()
    .where('stream', '=', CHECKINS_STREAM)
    .where((eb) =>
      eb.or([
        eb('status', '=', 'pending'),
        eb.and([
          eb('status', '=', 'failed'),
          // A foreground run retries failed windows now; the worker waits out their backoff.
          options.ignoreBackoff === true
            ? eb.lit(true)
            : eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', sql<Date>`now()`)]),
        ]),
        eb.and([
          eb('status', '=', 'running'),
          sql<boolean>`not exists (select 1 from rewards.leases l
                                   where l.name = ${windowLeaseNameSql} and l.expires_at > now())`,
        ]),
      ]),
    )
    .orderBy('window_start', 'asc')
    .limit(options.limit ?? 10_000)
    .execute();
}

/**
 * Running windows whose live lease was taken by a process with this host key, with that process's
 * pid: if it is gone (kill -9 on this host), the window need not wait for the lease to expire.
 */
export async function runningWindowsLeasedFrom(
  db: Executor,
  hostKey: string,
): Promise<Array<SyncWindow & { lease_pid: number | null }>> {
  return db
    .selectFrom('rewards.sync_windows')
    .innerJoin('rewards.leases as l', (join) =>
      join.on(sql<boolean>`l.name = ${windowLeaseNameSql} and l.expires_at > now()`),
    )
    .selectAll('rewards.sync_windows')
    .select('l.pid as lease_pid')
    .where('rewards.sync_windows.stream', '=', CHECKINS_STREAM)
    .where('rewards.sync_windows.status', '=', 'running')
    .where('l.host_key', '=', hostKey)
    .orderBy('rewards.sync_windows.window_start')
    .execute();
}

export async function windowsInRange(
  db: Executor,
  range: { from?: Date; to?: Date },
  statuses?: Array<SyncWindow['status']>,
): Promise<SyncWindow[]> {
  let query = db.selectFrom('rewards.sync_windows').selectAll().where('stream', '=', CHECKINS_STREAM);
  if (range.from !== undefined) query = query.where('window_start', '>=', range.from);
  if (range.to !== undefined) query = query.where('window_end', '<=', range.to);
  if (statuses !== undefined) query = query.where('status', 'in', statuses);
  return query.orderBy('window_start', 'asc').execute();
}

/** The windows of [from, to) that overlap any known window: used to plan only the gaps. */
export async function knownWindowsOverlapping(db: Executor, from: Date, to: Date): Promise<Window[]> {
  const rows = await db
    .selectFrom('rewards.sync_windows')
    .select(['window_start', 'window_end'])
    .where('stream', '=', CHECKINS_STREAM)
    .where('window_start', '<', to)
    .where('window_end', '>', from)
    .orderBy('window_start')
    .execute();
  return rows.map(windowOf);
}
