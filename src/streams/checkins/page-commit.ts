import type { Page } from '../../api/partner-api.js';
import { unfenced } from '../../leases/fenced-database.js';
import type { CheckIn, Location } from '../../records/index.js';
import type { KeysetCursor } from '../../sync/keyset-paging.js';
import type { Window } from '../../sync/windows.js';
import { commitCheckInPage } from '../../warehouse/check-in-pages.js';
import { writeCheckIns } from '../../warehouse/check-ins.js';
import {
  embeddedLocationsCacheFor,
  type EmbeddedLocationsCache,
} from '../../warehouse/embedded-locations-cache.js';
import { writePageWithFallback } from '../../warehouse/page-fallback.js';
import type { Rejection } from '../../warehouse/rejected-records.js';
import { noteSchemaDrift } from '../schema-drift.js';
import { CHECKINS, describeWindow, type CheckinsDeps } from './deps.js';

/** Where a committed page leaves the read: its checkpoint, and whether it is the attempt's first page. */
export interface PageCheckpoint {
  seenAt: Date;
  next: KeysetCursor;
  firstOfAttempt: boolean;
}

/**
 * The writes of one read of a window. Each page is one transaction: its rows, its embedded
 * locations, its rejections and the window's checkpoint, so a crash resumes at the next page.
 * A page the database refuses is written record by record (writePageWithFallback).
 */
export class WindowPageCommitter {
  readonly #rejectionsSeen = new Set<string>();
  /** Per database, not per lease: the locations this process wrote stay written across windows. */
  readonly #embeddedLocations: EmbeddedLocationsCache;
  /**
   * A window never completed (its first read: every window of a backfill) expects its ids to be
   * new, and its pages take the plain insert (commitCheckInPage's `expectNewIds`) until one shows
   * an id already stored (a resumed read's page edge, an id moved from another window); from then
   * on, the upsert.
   */
  #expectNewIds: boolean;
  /**
   * The rows of the last page written whole at its oldest instant: keyset paging reads them again
   * as the next page's newest (src/sync/keyset-paging.ts), so they are the ids a first read meets
   * twice.
   */
  #edgeRows = new Map<string, CheckIn>();

  constructor(
    private readonly deps: CheckinsDeps,
    private readonly window: Window,
    options: { firstRead: boolean } = { firstRead: false },
  ) {
    this.#embeddedLocations = embeddedLocationsCacheFor(unfenced(deps.db));
    this.#expectNewIds = options.firstRead;
  }

  /** Commits one page with its checkpoint; returns the rows stored. */
  async commit(page: Page<CheckIn>, at: PageCheckpoint): Promise<number> {
    const { records } = page;
    const fresh = page.rejections.filter(this.#isFresh);
    const embedded = this.#embeddedLocations.unwritten(
      records.map((record) => record.location),
      at.seenAt,
    );
    const { refused } = await this.#write(page, at, embedded, fresh);
    this.#edgeRows = refused.length === 0 ? oldestRows(records) : new Map<string, CheckIn>();
    // Committed: these need no writing on the next pages (record by record wrote its own).
    if (refused.length === 0) this.#embeddedLocations.remember(embedded, at.seenAt);
    await noteSchemaDrift(this.deps, 'check_ins', page.drift);
    fresh.push(...refused);
    if (refused.length > 0) {
      this.deps.logger.warn(
        { window: describeWindow(this.window), refused: refused.map((r) => r.recordId) },
        'the database refused some check-ins of a page; they are in rejected_records, the rest is stored',
      );
    }
    if (fresh.length > 0) this.deps.metrics.recordsRejected.inc({ stream: CHECKINS }, fresh.length);
    return records.length - refused.length;
  }

  /** A rejection not met before in this read (counted once however often it is re-read). */
  readonly #isFresh = (rejection: Rejection): boolean => {
    const key = rejection.recordId ?? JSON.stringify(rejection.payload);
    if (this.#rejectionsSeen.has(key)) return false;
    this.#rejectionsSeen.add(key);
    return true;
  };

  #write(
    page: Page<CheckIn>,
    at: PageCheckpoint,
    embedded: readonly Location[],
    fresh: readonly Rejection[],
  ): Promise<{ refused: Rejection[] }> {
    const { db } = this.deps;
    const total = page.pagination.totalCount;
    return writePageWithFallback({
      records: page.records,
      writePage: async (rows, refusedRows) => {
        const toWrite = this.#expectNewIds ? withoutUnchangedEdgeRows(rows, this.#edgeRows) : null;
        const { heldIds } = await commitCheckInPage(db, {
          window: this.window,
          checkIns: toWrite ?? rows,
          locations: embedded,
          rejections: [...page.rejections, ...refusedRows],
          firstMet: [...fresh, ...refusedRows.filter(this.#isFresh)],
          checkpoint: {
            cursorBefore: new Date(at.next.before),
            cursorPage: at.next.page,
            rows: page.records.length - refusedRows.length,
            apiTotalCount: total,
            now: at.seenAt,
            ...(at.firstOfAttempt ? { firstTotalCount: total } : {}),
          },
          seenAt: at.seenAt,
          expectNewIds: toWrite !== null,
        });
        if (heldIds) this.#expectNewIds = false;
      },
      writeOne: (record) => db.transaction().execute((trx) => writeCheckIns(trx, [record], at.seenAt)),
      rejectionOf: (record) => ({ recordId: record.id, payload: record.raw }),
    });
  }
}

/** The records at the page's oldest instant, by id. */
function oldestRows(records: readonly CheckIn[]): Map<string, CheckIn> {
  let oldest = Number.POSITIVE_INFINITY;
  for (const record of records) oldest = Math.min(oldest, record.createdAt.getTime());
  return new Map(records.filter((r) => r.createdAt.getTime() === oldest).map((r) => [r.id, r]));
}

/**
 * A first read's page without the rows the previous page wrote that come back unchanged (the
 * keyset edge): written again they would change nothing but last_seen_at, by the time between two
 * pages of one read, and they would make every page's plain insert fail on the directory's key.
 * Null when an edge row came back changed: that page takes the upsert.
 */
function withoutUnchangedEdgeRows(
  rows: readonly CheckIn[],
  edge: ReadonlyMap<string, CheckIn>,
): readonly CheckIn[] | null {
  if (edge.size === 0) return rows;
  const out: CheckIn[] = [];
  for (const row of rows) {
    const before = edge.get(row.id);
    if (before === undefined) out.push(row);
    else if (!sameStoredContent(before, row)) return null;
  }
  return out;
}

/** Whether two reads of a check-in store the same columns (last_seen_at aside). */
function sameStoredContent(a: CheckIn, b: CheckIn): boolean {
  return (
    a.createdAt.getTime() === b.createdAt.getTime() &&
    (a.endedAt?.getTime() ?? null) === (b.endedAt?.getTime() ?? null) &&
    a.svcPayEnabled === b.svcPayEnabled &&
    a.locationId === b.locationId &&
    a.restaurantId === b.restaurantId &&
    a.extra == null &&
    b.extra == null
  );
}
