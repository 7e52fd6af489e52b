import type { Kysely } from 'kysely';
import { PartnerApiError } from '../api/errors.js';
import type { PartnerApi } from '../api/partner-api.js';
import { isUuid, type Rejection } from '../api/records/index.js';
import {
  checkPagingComplete,
  planSnapshotChanges,
  seenCountOfRun,
  shortCountOfRun,
  summarizePlan,
  type SnapshotPassFacts,
} from '../sync/snapshot-diff.js';
import { storeRejections } from '../warehouse/rejected-records.js';
import {
  loadRestaurantStates,
  markRestaurantsDeleted,
  restaurantContentHash,
  upsertRestaurantPage,
} from '../warehouse/restaurants.js';
import type { DB } from '../warehouse/schema.js';
import { lastFinishedRun } from '../warehouse/sync-runs.js';
import type { StreamName } from './registry.js';
import type { PassOutcome, StreamDeps } from './stream.js';

const STREAM = 'restaurants' satisfies StreamName;

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

/** A rejected record's id, when it is one that could match a stored row. */
export function usableRejectionId(rejection: Rejection): string | null {
  return isUuid(rejection.recordId) ? rejection.recordId.toLowerCase() : null;
}

/** API failures end a pass early (no deletions); anything else (the database, an abort) is thrown. */
export function isPassInterruption(
  error: unknown,
  signal: AbortSignal | undefined,
): error is PartnerApiError {
  return error instanceof PartnerApiError && signal?.aborted !== true;
}

/**
 * Pages `GET /restaurants` fully. Each page commits its rows, versions and rejections together.
 * Restaurants absent from a complete pass are marked deleted, unless the pass is suspiciously
 * short (see planSnapshotChanges).
 */
export async function runRestaurantsPass(deps: StreamDeps<PartnerApi>): Promise<PassOutcome> {
  const { db, api, clock, config, logger, metrics, signal } = deps;
  const previous = await loadRestaurantStates(db);
  const liveCount = [...previous.values()].filter((r) => !r.deleted).length;
  const baseline = await loadDeletionBaseline(db, STREAM, liveCount);

  const seen = new Map<string, string | null>();
  const totalCounts: number[] = [];
  let itemsReceived = 0;
  let rejectedWithoutId = 0;
  let rejected = 0;
  let written = 0;
  let newVersions = 0;
  let interruption: PartnerApiError | undefined;

  try {
    for await (const page of api.restaurantPages({ pageSize: config.api.pageSize, signal })) {
      const seenAt = clock.now();
      const plan = await db.transaction().execute(async (trx) => {
        await storeRejections(trx, STREAM, page.rejections, seenAt);
        return upsertRestaurantPage(trx, page.records, seenAt);
      });
      totalCounts.push(page.pagination.totalCount);
      itemsReceived += page.records.length + page.rejections.length;
      written += page.records.length;
      newVersions += plan.open.length;
      rejected += page.rejections.length;
      for (const restaurant of page.records) seen.set(restaurant.id, restaurantContentHash(restaurant));
      // A malformed record still proves its restaurant exists: never take it for a deletion.
      for (const rejection of page.rejections) {
        const id = usableRejectionId(rejection);
        if (id === null) rejectedWithoutId++;
        else if (!seen.has(id)) seen.set(id, null);
      }
      metrics.rowsIngested.inc({ stream: STREAM }, page.records.length);
      metrics.recordsRejected.inc({ stream: STREAM }, page.rejections.length);
    }
  } catch (error) {
    if (!isPassInterruption(error, signal)) throw error;
    interruption = error;
  }

  const paging = checkPagingComplete({
    totalCounts,
    itemsReceived,
    distinctIds: seen.size,
    rejectedWithoutId,
  });
  const facts: SnapshotPassFacts = {
    complete: interruption === undefined && paging.complete,
    maxDrop: config.snapshots.maxDrop,
    ...baseline,
  };
  if (interruption !== undefined) facts.incompleteReason = `the pass stopped early: ${interruption.message}`;
  else if (!paging.complete) facts.incompleteReason = paging.reason;

  const plan = planSnapshotChanges(previous, seen, facts);
  let deletionsMarked = 0;
  if (plan.deletions.kind === 'marked' && plan.deletions.ids.length > 0) {
    const ids = plan.deletions.ids;
    deletionsMarked = await db.transaction().execute((trx) => markRestaurantsDeleted(trx, ids, clock.now()));
  }
  const details = {
    pages: totalCounts.length,
    seen: seen.size,
    written,
    rejected,
    newVersions,
    ...summarizePlan(plan),
    ...(plan.deletions.kind === 'marked' ? { deletions: { marked: deletionsMarked } } : {}),
  };
  if (plan.deletions.kind === 'suppressed') {
    logger.warn(
      { stream: STREAM, reason: plan.deletions.reason, why: plan.deletions.detail, seen: seen.size },
      'restaurants pass marked no deletions',
    );
  }
  return {
    status: passStatus(
      interruption !== undefined && totalCounts.length === 0,
      plan.deletions.kind === 'marked',
    ),
    rows: written,
    requests: totalCounts.length + (interruption === undefined ? 0 : 1),
    details,
    ...(interruption === undefined ? {} : { error: interruption.message }),
  };
}

/** Nothing read: failed. Read but deletions held back (error, paging, short): partial. */
function passStatus(nothingRead: boolean, deletionsDecided: boolean): PassOutcome['status'] {
  if (nothingRead) return 'failed';
  return deletionsDecided ? 'succeeded' : 'partial';
}
