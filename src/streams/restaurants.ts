import type { PartnerApi } from '../api/partner-api.js';
import { noteSchemaDrift } from './schema-drift.js';
import type { ListedRestaurant } from '../records/index.js';
import { planSnapshotChanges, summarizePlan, type SnapshotPassFacts } from '../sync/snapshot-diff.js';
import {
  loadRestaurantStates,
  markRestaurantsDeleted,
  restaurantContentHash,
  upsertRestaurantPage,
} from '../warehouse/restaurants.js';
import { STREAM_NAME } from '../sync/stream-facts.js';
import { loadDeletionBaseline, readSnapshotList } from './snapshot-list.js';
import type { PassOutcome, SnapshotPassOptions, StreamDeps } from './stream.js';

const STREAM = STREAM_NAME.restaurants;

/**
 * Pages `GET /restaurants` fully (readSnapshotList). Restaurants absent from a complete pass are
 * marked deleted, unless the pass is suspiciously short (see planSnapshotChanges).
 */
export async function runRestaurantsPass(
  deps: StreamDeps<PartnerApi>,
  options: SnapshotPassOptions = {},
): Promise<PassOutcome> {
  const { db, api, clock, config, logger, signal } = deps;
  const previous = await loadRestaurantStates(db);
  const liveCount = [...previous.values()].filter((r) => !r.deleted).length;
  const baseline = await loadDeletionBaseline(db, STREAM, liveCount);

  const read = await readSnapshotList(deps, {
    stream: STREAM,
    pages: api.restaurantPages({ pageSize: config.api.pageSize, signal }),
    writeRecords: (trx, records: readonly ListedRestaurant[], seenAt) =>
      upsertRestaurantPage(trx, records, seenAt, options),
    contentHash: restaurantContentHash,
  });
  await noteSchemaDrift(deps, 'restaurants', read.drift);
  const facts: SnapshotPassFacts = {
    complete: read.incompleteReason === undefined,
    maxDrop: config.snapshots.maxDrop,
    ...baseline,
    ...(read.incompleteReason === undefined ? {} : { incompleteReason: read.incompleteReason }),
  };
  const plan = planSnapshotChanges(previous, read.seen, facts);
  let deletionsMarked = 0;
  if (plan.deletions.kind === 'marked' && plan.deletions.ids.length > 0) {
    const ids = plan.deletions.ids;
    deletionsMarked = await db.transaction().execute((trx) => markRestaurantsDeleted(trx, ids, clock.now()));
  }
  const details = {
    pages: read.pages,
    seen: read.seen.size,
    written: read.written,
    rejected: read.rejected,
    newVersions: read.newVersions,
    ...summarizePlan(plan),
    ...(plan.deletions.kind === 'marked' ? { deletions: { marked: deletionsMarked } } : {}),
  };
  if (plan.deletions.kind === 'suppressed') {
    logger.warn(
      { stream: STREAM, reason: plan.deletions.reason, why: plan.deletions.detail, seen: read.seen.size },
      'restaurants pass marked no deletions',
    );
  }
  return {
    status: passStatus(read.interruption !== undefined && read.pages === 0, plan.deletions.kind === 'marked'),
    rows: read.written,
    requests: read.pages + (read.interruption === undefined ? 0 : 1),
    details,
    followUps: { newRestaurants: plan.inserts.length },
    ...(read.interruption === undefined ? {} : { error: read.interruption.message }),
  };
}

/** Nothing read: failed. Read but deletions held back (error, paging, short): partial. */
function passStatus(nothingRead: boolean, deletionsDecided: boolean): PassOutcome['status'] {
  if (nothingRead) return 'failed';
  return deletionsDecided ? 'succeeded' : 'partial';
}
