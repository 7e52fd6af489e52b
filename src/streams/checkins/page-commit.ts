import type { Page } from '../../api/partner-api.js';
import { unfenced } from '../../leases/fenced-database.js';
import { oldestCreatedAtMs, type CheckIn, type Location } from '../../records/index.js';
import type { KeysetCursor } from '../../sync/keyset-paging.js';
import type { Window } from '../../sync/windows.js';
import { commitCheckInPage } from '../../warehouse/check-in-pages.js';
import { writeCheckIns } from '../../warehouse/check-ins.js';
import {
  embeddedLocationsCacheFor,
  type EmbeddedLocationsCache,
} from '../../warehouse/embedded-locations-cache.js';
import { isDataError, writePageWithFallback } from '../../warehouse/page-fallback.js';
import type { Rejection } from '../../warehouse/rejected-records.js';
import { noteSchemaDrift } from '../schema-drift.js';
import { CHECKINS, describeWindow, type CheckinsDeps } from './deps.js';
import { CHECKINS_TUNING } from './tuning.js';

/**
 * Where a committed page leaves the read: its checkpoint, whether it is the attempt's first page,
 * and whether it is the read's last (nothing may stay held after it).
 */
export interface PageCheckpoint {
  seenAt: Date;
  next: KeysetCursor;
  firstOfAttempt: boolean;
  last: boolean;
}

/** A first read's page held to be written with the next ones (WindowPageCommitter). */
interface HeldPage {
  page: Page<CheckIn>;
  at: PageCheckpoint;
  /** Its rows without the unchanged keyset-edge rows of the page before it. */
  rows: readonly CheckIn[];
}

/**
 * The writes of one read of a window. Each write is one transaction: its rows, its embedded
 * locations, its rejections and the window's checkpoint, so a crash resumes after the last write.
 * A write the database refuses is made record by record (writePageWithFallback).
 *
 * A first read holds its plain pages (check-ins only: no rejection, no location to write) and
 * inserts CHECKINS_TUNING.firstReadPagesPerWrite of them in one statement with the last one's
 * checkpoint: the rollup triggers' per-group work and the per-statement cost are paid once for
 * them (bench/write-path-parts.ts: 8 pages a statement, 24 % less Postgres CPU). When that insert
 * cannot be (an id already stored, a value refused), the held pages are written one by one as
 * before. A crash loses only held pages, never checkpointed: the read resumes before them.
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
  #held: HeldPage[] = [];

  constructor(
    private readonly deps: CheckinsDeps,
    private readonly window: Window,
    options: { firstRead: boolean } = { firstRead: false },
  ) {
    this.#embeddedLocations = embeddedLocationsCacheFor(unfenced(deps.db));
    this.#expectNewIds = options.firstRead;
  }

  /**
   * Commits one page with its checkpoint, or holds it for the next write (a first read's plain
   * page); returns the rows stored by this call (held pages count when they are written).
   */
  async commit(page: Page<CheckIn>, at: PageCheckpoint): Promise<number> {
    const embedded = this.#embeddedLocations.unwritten(
      page.records.map((record) => record.location),
      at.seenAt,
    );
    if (this.#expectNewIds && page.rejections.length === 0 && embedded.length === 0) {
      const rows = withoutUnchangedEdgeRows(page.records, this.#edgeRows);
      if (rows !== null) {
        this.#held.push({ page, at, rows });
        this.#edgeRows = oldestRows(page.records);
        if (!at.last && this.#held.length < CHECKINS_TUNING.firstReadPagesPerWrite) return 0;
        return this.#writeHeld();
      }
    }
    // Pages held before this one are written first, so the checkpoints stay in order.
    const stored = this.#held.length > 0 ? await this.#writeHeld() : 0;
    const rows = this.#expectNewIds ? withoutUnchangedEdgeRows(page.records, this.#edgeRows) : null;
    return stored + (await this.#writePage(page, at, embedded, rows));
  }

  /** Writes the pages held so far (a read that stops keeps what it fetched); returns the rows stored. */
  async flush(): Promise<number> {
    return this.#held.length > 0 ? this.#writeHeld() : 0;
  }

  /**
   * The held pages: one plain insert with the last one's checkpoint when they can; otherwise
   * (an id already stored, a value the database refuses) each page as it was read, with its own
   * read time, which the upsert's stale-write guard compares, and its own record-by-record fallback.
   */
  async #writeHeld(): Promise<number> {
    const held = this.#held;
    this.#held = [];
    if (held.length > 1 && (await this.#insertTogether(held))) {
      for (const h of held) await noteSchemaDrift(this.deps, 'check_ins', h.page.drift);
      return held.reduce((sum, h) => sum + h.page.records.length, 0);
    }
    let stored = 0;
    for (const h of held)
      stored += await this.#writePage(h.page, h.at, [], this.#expectNewIds ? h.rows : null);
    return stored;
  }

  /** The held pages' rows in one plain insert with the last page's checkpoint; false: nothing written. */
  async #insertTogether(held: readonly HeldPage[]): Promise<boolean> {
    const first = held[0]!;
    const last = held.at(-1)!;
    try {
      const { written, heldIds } = await commitCheckInPage(this.deps.db, {
        window: this.window,
        checkIns: held.flatMap((h) => h.rows),
        locations: [],
        rejections: [],
        firstMet: [],
        checkpoint: {
          cursorBefore: new Date(last.at.next.before),
          cursorPage: last.at.next.page,
          rows: held.reduce((sum, h) => sum + h.page.records.length, 0),
          pages: held.length,
          apiTotalCount: last.page.pagination.totalCount,
          now: last.at.seenAt,
          ...(first.at.firstOfAttempt ? { firstTotalCount: first.page.pagination.totalCount } : {}),
        },
        // New rows only, stamped with the first held page's read time: any read after it may
        // update them.
        seenAt: first.at.seenAt,
        expectNewIds: true,
        insertOnly: true,
      });
      if (heldIds) this.#expectNewIds = false;
      return written;
    } catch (error) {
      if (isDataError(error)) return false;
      throw error;
    }
  }

  /**
   * One page with its checkpoint. `rows`: what a first read inserts (the page without its
   * unchanged keyset-edge rows); null: the upsert writes the page's records.
   */
  async #writePage(
    page: Page<CheckIn>,
    at: PageCheckpoint,
    embedded: readonly Location[],
    rows: readonly CheckIn[] | null,
  ): Promise<number> {
    const { records } = page;
    const fresh = page.rejections.filter(this.#isFresh);
    const { refused } = await this.#write(page, at, embedded, fresh, rows);
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
    firstReadRows: readonly CheckIn[] | null,
  ): Promise<{ refused: Rejection[] }> {
    const { db } = this.deps;
    const total = page.pagination.totalCount;
    return writePageWithFallback({
      records: page.records,
      writePage: async (rows, refusedRows) => {
        // The whole page: a first read's rows; a fallback's last call (refusals only) takes the upsert.
        const toWrite = rows.length === page.records.length ? firstReadRows : null;
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
  const oldest = oldestCreatedAtMs(records);
  return new Map(records.filter((r) => r.createdAtMs === oldest).map((r) => [r.id, r]));
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
    a.createdAtMs === b.createdAtMs &&
    a.endedAtMs === b.endedAtMs &&
    a.svcPayEnabled === b.svcPayEnabled &&
    a.locationId === b.locationId &&
    a.restaurantId === b.restaurantId &&
    a.extra == null &&
    b.extra == null
  );
}
