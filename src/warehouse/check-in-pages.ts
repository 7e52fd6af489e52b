import { sql, type Kysely, type Transaction } from 'kysely';
import type { CheckIn, Location } from '../records/index.js';
import type { Window } from '../sync/windows.js';
import {
  checkInInsert,
  checkInUpsert,
  isHeldIdConflict,
  refreshRefusedSightings,
  writeCheckIns,
} from './check-ins.js';
import { storeRejections, type Rejection } from './rejected-records.js';
import type { DB } from './schema.js';
import { heldLeasesQuery, leaseFenceOf } from './leases.js';
import { pageCheckpoint, recordPage, WindowGoneError, type PageProgress } from './sync-windows.js';
import { CHECKINS_STREAM } from './sync-window-reads.js';

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
  /**
   * The rejections first met in this attempt. Those with a stored row in the window count as seen
   * rows (refreshRefusedSightings), the others as rejected on the checkpoint.
   */
  firstMet: readonly Rejection[];
  checkpoint: Omit<PageProgress, 'rejected'>;
  seenAt: Date;
  /**
   * The caller expects every id of the page to be new (a window's first read): its rows are
   * inserted by checkInInsert's statement, and written by the upsert only if an id turns out to
   * be held. Absent or false: the upsert.
   */
  expectNewIds?: boolean;
  /**
   * With `expectNewIds`: when an id turns out to be held, write nothing and say so (`written`
   * false) instead of writing the page with the upsert. The caller then writes it its own way.
   */
  insertOnly?: boolean;
}

/**
 * What commitCheckInPage found: `heldIds` when a page expected new showed an id already stored;
 * `written` false only when `insertOnly` left such a page unwritten.
 */
export interface CheckInPageCommitted {
  heldIds: boolean;
  written: boolean;
}

/**
 * Commits one feed page, all or nothing: its check-ins, the embedded locations still to write,
 * its rejections and the window's checkpoint, so a crash resumes at the next page. A page of
 * check-ins only (nearly every page once its locations are written) is ONE statement: the
 * upsert and the checkpoint as data-modifying CTEs of one implicit transaction, instead of
 * BEGIN, SET, upsert, checkpoint, COMMIT.
 *
 * Fenced like every write under a lease (src/leases/fenced-database.ts): the transaction form
 * through the leased database, the one statement with the lease check as its first CTE (rows
 * locked FOR KEY SHARE: a renewal never waits for it) and both writes conditional on it. A lost lease writes nothing and throws
 * LeaseLostError; a window row that took no checkpoint throws WindowGoneError.
 */
export async function commitCheckInPage(
  db: Kysely<DB>,
  page: CheckInPageCommit,
): Promise<CheckInPageCommitted> {
  if (page.locations.length === 0 && page.rejections.length === 0) {
    if (page.expectNewIds === true) {
      try {
        await commitInOneStatement(db, page, checkInInsert);
        return { heldIds: false, written: true };
      } catch (error) {
        // The statement wrote nothing (one implicit transaction): the page takes the upsert.
        if (!isHeldIdConflict(error)) throw error;
      }
      if (page.insertOnly === true) return { heldIds: true, written: false };
      await commitInOneStatement(db, page, checkInUpsert);
      return { heldIds: true, written: true };
    }
    await commitInOneStatement(db, page, checkInUpsert);
    return { heldIds: false, written: true };
  }
  await db.transaction().execute(async (trx) => {
    await relaxCommitDurability(trx);
    await writeCheckIns(trx, page.checkIns, page.seenAt, page.checkIns.length === 0 ? [] : page.locations);
    await storeRejections(trx, CHECKINS_STREAM, page.rejections, page.seenAt);
    const range = { start: new Date(page.window.start), end: new Date(page.window.end) };
    const stored = await refreshRefusedSightings(
      trx,
      range,
      page.rejections.map((r) => r.recordId),
      page.seenAt,
    );
    const rejected = page.firstMet.filter(
      (r) => r.recordId === null || !stored.has(r.recordId.toLowerCase()),
    ).length;
    await recordPage(trx, page.window, { ...page.checkpoint, rejected });
  });
  return { heldIds: false, written: true };
}

async function commitInOneStatement(
  db: Kysely<DB>,
  page: CheckInPageCommit,
  rowWrites: typeof checkInUpsert,
): Promise<void> {
  const fence = leaseFenceOf(db);
  const leases = fence?.leases ?? [];
  // The statement carries its own lease check: run it as it is, not wrapped by the fenced database.
  const plain = fence?.unfenced ?? db;
  const held =
    leases.length === 0
      ? sql<boolean>`true`
      : sql<boolean>`(select count(*) from lease_check) = ${leases.length}`;
  const upsert = rowWrites(page.checkIns, page.seenAt, held);
  // Rows only: no rejection on this page.
  const checkpoint = pageCheckpoint(plain, page.window, { ...page.checkpoint, rejected: 0 }, held).returning(
    sql`1`.as('one'),
  );
  const ctes = [
    ...(leases.length === 0 ? [] : [sql`lease_check as (${heldLeasesQuery(leases)})`]),
    ...(upsert?.ctes ?? []),
    sql`checkpoint as (${checkpoint})`,
  ];
  const { rows } = await sql<{ held: boolean; checkpointed: number }>`
    with ${sql.join(ctes)}
    select ${held} as held, (select count(*) from checkpoint)::int as checkpointed, ${RELAXED_COMMIT}`.execute(
    plain,
  );
  const result = rows[0];
  if (result?.held !== true) {
    const { rows: heldNow } = await heldLeasesQuery(leases).execute(plain);
    const heldNames = heldNow.map((row) => row.name);
    throw fence?.lostLeaseError(heldNames) ?? new Error('a page commit without a lease lost none');
  }
  if (result.checkpointed !== 1) throw new WindowGoneError(page.window);
}
