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

  constructor(
    private readonly deps: CheckinsDeps,
    private readonly window: Window,
  ) {
    this.#embeddedLocations = embeddedLocationsCacheFor(unfenced(deps.db));
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
      writePage: (rows, refusedRows) =>
        commitCheckInPage(db, {
          window: this.window,
          checkIns: rows,
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
        }),
      writeOne: (record) => db.transaction().execute((trx) => writeCheckIns(trx, [record], at.seenAt)),
      rejectionOf: (record) => ({ recordId: record.id, payload: record.raw }),
    });
  }
}
