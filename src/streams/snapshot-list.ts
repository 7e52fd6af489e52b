import type { Kysely, Transaction } from 'kysely';
import { mergeDriftCounts, type DriftCount } from '../records/schema-drift.js';
import { PartnerApiError } from '../api/errors.js';
import type { Page } from '../api/paging.js';
import { isUuid, type Rejection } from '../records/index.js';
import {
  checkPagingComplete,
  seenCountOfRun,
  shortCountOfRun,
  type SnapshotPassFacts,
} from '../sync/snapshot-diff.js';
import type { VersionPlan } from '../sync/scd2.js';
import { writePageWithFallback } from '../warehouse/page-fallback.js';
import { storeRejections } from '../warehouse/rejected-records.js';
import type { DB } from '../warehouse/schema.js';
import { lastFinishedRun } from '../warehouse/sync-runs.js';
import { stopsThePass } from './pass-stop.js';
import type { StreamName } from '../sync/stream-facts.js';
import type { StreamDeps } from './stream.js';

/** What reading one snapshot list (all restaurants, or one restaurant's challenges) showed. */
export interface SnapshotListRead {
  /** id -> content hash; null when the record was seen only as a rejection (it exists, unreadable). */
  seen: Map<string, string | null>;
  pages: number;
  written: number;
  rejected: number;
  newVersions: number;
  /** Schema drift the pages showed, summed per (field, change) (docs/schema-drift.md). */
  drift: DriftCount[];
  /** Why the list cannot be trusted as the whole set (no deletions from it); absent when it can. */
  incompleteReason?: string;
  /** The API failure that ended the list early, if any. */
  interruption?: PartnerApiError;
}

export interface SnapshotListSource<R extends { id: string; raw: unknown }> {
  stream: StreamName;
  pages: AsyncIterable<Page<R>>;
  /** Writes one page's records (rows and history versions) inside the caller's transaction. */
  writeRecords(trx: Transaction<DB>, records: readonly R[], seenAt: Date): Promise<VersionPlan>;
  contentHash(record: R, seenAt: Date): string;
}

/**
 * Pages a snapshot list to its end. Each page commits its rows, versions and rejections together;
 * a page the database refuses for one bad value is written record by record, and the refused ones
 * become rejections (their ids still count as seen, so they are never taken for deletions). API
 * failures end the list early and are returned; anything else (the database, an abort) is thrown.
 */
export async function readSnapshotList<R extends { id: string; raw: unknown }>(
  deps: Pick<StreamDeps<unknown>, 'db' | 'clock' | 'logger' | 'metrics' | 'signal'>,
  source: SnapshotListSource<R>,
): Promise<SnapshotListRead> {
  const { stream } = source;
  const read: SnapshotListRead = {
    seen: new Map(),
    pages: 0,
    written: 0,
    rejected: 0,
    newVersions: 0,
    drift: [],
  };
  const totalCounts: number[] = [];
  let itemsReceived = 0;
  let rejectedWithoutId = 0;
  const noteExisting = (rejection: Rejection) => {
    const id = isUuid(rejection.recordId) ? rejection.recordId.toLowerCase() : null;
    if (id === null) rejectedWithoutId++;
    else if (!read.seen.has(id)) read.seen.set(id, null);
  };
  try {
    for await (const page of source.pages) {
      const seenAt = deps.clock.now();
      const { refused, newVersions } = await writeSnapshotPage(deps.db, source, page, seenAt);
      const rejections = [...page.rejections, ...refused];
      const stored = page.records.filter((record) => !refused.some((r) => r.recordId === record.id));
      read.pages++;
      read.written += stored.length;
      read.rejected += rejections.length;
      read.newVersions += newVersions;
      if (page.drift !== undefined) read.drift = mergeDriftCounts(read.drift, page.drift);
      totalCounts.push(page.pagination.totalCount);
      itemsReceived += page.records.length + page.rejections.length;
      for (const record of stored) read.seen.set(record.id, source.contentHash(record, seenAt));
      // A malformed or refused record still proves it exists: never take it for a deletion.
      for (const rejection of rejections) noteExisting(rejection);
      if (refused.length > 0) {
        deps.logger.warn(
          { stream, refused: refused.map((r) => r.recordId) },
          'the database refused some records of a page; they are in rejected_records, the rest is stored',
        );
      }
      deps.metrics.rowsIngested.inc({ stream }, stored.length);
      deps.metrics.recordsRejected.inc({ stream }, rejections.length);
    }
  } catch (error) {
    if (stopsThePass(error) || !isPassInterruption(error, deps.signal)) throw error;
    read.interruption = error;
    read.incompleteReason = `the pass stopped early: ${error.message}`;
    return read;
  }
  const paging = checkPagingComplete({
    totalCounts,
    itemsReceived,
    distinctIds: read.seen.size,
    rejectedWithoutId,
  });
  if (!paging.complete) read.incompleteReason = paging.reason;
  return read;
}

async function writeSnapshotPage<R extends { id: string; raw: unknown }>(
  db: Kysely<DB>,
  source: SnapshotListSource<R>,
  page: Page<R>,
  seenAt: Date,
): Promise<{ refused: Rejection[]; newVersions: number }> {
  let newVersions = 0;
  const { refused } = await writePageWithFallback({
    records: page.records,
    writePage: (records, refusedRecords) =>
      db.transaction().execute(async (trx) => {
        await storeRejections(trx, source.stream, [...page.rejections, ...refusedRecords], seenAt);
        newVersions += (await source.writeRecords(trx, records, seenAt)).open.length;
      }),
    writeOne: (record) =>
      db.transaction().execute(async (trx) => {
        newVersions += (await source.writeRecords(trx, [record], seenAt)).open.length;
      }),
    rejectionOf: (record) => ({ recordId: record.id, payload: record.raw }),
  });
  return { refused, newVersions };
}

/**
 * The baseline a snapshot's seen count is compared with: the last succeeded pass (from
 * sync_runs), else the records the warehouse holds as live; plus the previous pass's count when
 * that pass was complete but held its deletions back as short (a second such pass confirms).
 */
export async function loadDeletionBaseline(
  db: Kysely<DB>,
  stream: string,
  liveCount: number,
): Promise<Pick<SnapshotPassFacts, 'lastCompleteCount' | 'previousShortCount'>> {
  const lastComplete = seenCountOfRun(await lastFinishedRun(db, stream, ['succeeded']));
  const previousShort = shortCountOfRun(
    await lastFinishedRun(db, stream, ['succeeded', 'partial', 'failed']),
  );
  return {
    lastCompleteCount: lastComplete ?? (liveCount > 0 ? liveCount : null),
    previousShortCount: previousShort,
  };
}

/** API failures end a pass early (no deletions); anything else (the database, an abort) is thrown. */
export function isPassInterruption(
  error: unknown,
  signal: AbortSignal | undefined,
): error is PartnerApiError {
  return error instanceof PartnerApiError && signal?.aborted !== true;
}
