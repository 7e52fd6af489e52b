import type { Kysely } from 'kysely';
import type { DB, SyncRunStatus } from './schema.js';

export async function startSyncRun(db: Kysely<DB>, stream: string, startedAt: Date): Promise<string> {
  const row = await db
    .insertInto('rewards.sync_runs')
    .values({ stream, started_at: startedAt })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function finishSyncRun(
  db: Kysely<DB>,
  id: string,
  outcome: {
    status: Exclude<SyncRunStatus, 'running'>;
    finishedAt: Date;
    rows: number;
    requests?: number;
    error?: string;
    details?: Record<string, unknown>;
  },
): Promise<void> {
  await db
    .updateTable('rewards.sync_runs')
    .set({
      status: outcome.status,
      finished_at: outcome.finishedAt,
      rows: outcome.rows,
      requests: outcome.requests ?? 0,
      error: outcome.error ?? null,
      details: JSON.stringify(outcome.details ?? {}),
    })
    .where('id', '=', id)
    .execute();
}

/** The last finished run of a stream that ended in one of `statuses` (e.g. the last complete restaurants pass). */
export async function lastFinishedRun(
  db: Kysely<DB>,
  stream: string,
  statuses: SyncRunStatus[],
): Promise<{ id: string; rows: number; finished_at: Date | null; details: unknown } | undefined> {
  return db
    .selectFrom('rewards.sync_runs')
    .select(['id', 'rows', 'finished_at', 'details'])
    .where('stream', '=', stream)
    .where('status', 'in', statuses)
    .orderBy('started_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}
