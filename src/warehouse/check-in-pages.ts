import { sql, type Kysely, type Transaction } from 'kysely';
import type { CheckIn, Location } from '../api/records/index.js';
import type { Window } from '../sync/windows.js';
import { checkInUpsert, writeCheckIns } from './check-ins.js';
import { storeRejections, type Rejection } from './rejected-records.js';
import type { DB } from './schema.js';
import { pageCheckpoint, recordPage, type PageProgress } from './sync-windows.js';

/**
 * A check-in commit need not wait for its WAL flush: if Postgres crashes, the last few commits
 * are lost *with their checkpoint*, so the window re-fetches those pages into idempotent upserts.
 * Nothing outside Postgres acted on them. (Intent transitions and alerts keep synchronous
 * commits: a webhook may follow them.)
 */
export async function relaxCommitDurability(trx: Transaction<DB>): Promise<void> {
  await sql`set local synchronous_commit = off`.execute(trx);
}

/** The same, as an expression evaluated inside a single-statement (implicit) transaction. */
const RELAXED_COMMIT = sql`set_config('synchronous_commit', 'off', true)`;

export interface CheckInPageCommit {
  window: Window;
  checkIns: readonly CheckIn[];
  /** The embedded locations still to write (EmbeddedLocationsCache). */
  locations: readonly Location[];
  rejections: readonly Rejection[];
  checkpoint: PageProgress;
  seenAt: Date;
}

/**
 * Commits one feed page, all or nothing: its check-ins, the embedded locations still to write,
 * its rejections and the window's checkpoint, so a crash resumes at the next page. A page of
 * check-ins only (nearly every page once its locations are written) is ONE statement: the
 * upsert and the checkpoint as data-modifying CTEs of one implicit transaction, instead of
 * BEGIN, SET, upsert, checkpoint, COMMIT.
 */
export async function commitCheckInPage(db: Kysely<DB>, page: CheckInPageCommit): Promise<void> {
  const upsert = checkInUpsert(page.checkIns, page.seenAt);
  const checkpoint = pageCheckpoint(db, page.window, page.checkpoint);
  if (page.locations.length === 0 && page.rejections.length === 0) {
    const ctes =
      upsert === null
        ? sql`checkpoint as (${checkpoint})`
        : sql`written as (${upsert}), checkpoint as (${checkpoint})`;
    await sql`with ${ctes} select ${RELAXED_COMMIT}`.execute(db);
    return;
  }
  await db.transaction().execute(async (trx) => {
    await relaxCommitDurability(trx);
    await writeCheckIns(trx, page.checkIns, page.seenAt, page.checkIns.length === 0 ? [] : page.locations);
    await storeRejections(trx, 'checkins', page.rejections, page.seenAt);
    await recordPage(trx, page.window, page.checkpoint);
  });
}
