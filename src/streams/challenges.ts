import type { PartnerApiError } from '../api/errors.js';
import { mergeDriftCounts, type DriftCount } from '../records/schema-drift.js';
import { noteSchemaDrift } from './schema-drift.js';
import type { PartnerApi } from '../api/partner-api.js';
import { planSnapshotChanges, summarizePlan, type PreviousRecord } from '../sync/snapshot-diff.js';
import {
  challengeRow,
  loadChallengeStates,
  type ChallengeState,
  markChallengesDeleted,
  upsertChallengePage,
} from '../warehouse/challenges.js';
import { liveRestaurantIds } from '../warehouse/restaurants.js';
import { readStatesOfKind, recordReads } from '../warehouse/record-reads.js';
import { dueRecordIds } from '../sync/snapshot-read-plan.js';
import { learnedRead } from '../sync/read-cadence.js';
import type { ReadState } from '../sync/read-cadence.js';
import { loadDeletionBaseline, readSnapshotList } from './snapshot-list.js';
import { streamAllowance } from './stream-budget.js';
import { STREAM_NAME } from '../sync/stream-facts.js';
import type { PassOutcome, SnapshotPassOptions, StreamDeps } from './stream.js';

const STREAM = STREAM_NAME.challenges;
/** A restaurant's challenge list is read on the adaptive cadence (docs/freshness.md). */
const READ_KIND = 'restaurant.challenges';
/** Consecutive restaurants whose paging failed after which the pass stops: the API is down. */
const MAX_CONSECUTIVE_FAILURES = 3;

interface RestaurantChallenges {
  /** id -> content hash (null: seen only as a rejected record). */
  seen: Map<string, string | null>;
  newVersions: number;
  complete: boolean;
  incompleteReason?: string;
}

/**
 * Pages `GET /challenges?restaurant=` for every restaurant not marked deleted whose list is due on
 * the adaptive cadence (`resync`: every one). A challenge missing from its restaurant's list is
 * marked deleted only when every page of that restaurant was read and consistent, and the pass as
 * a whole is not suspiciously short.
 */
export async function runChallengesPass(
  deps: StreamDeps<PartnerApi>,
  options: SnapshotPassOptions = {},
): Promise<PassOutcome> {
  const { db, clock, logger } = deps;
  const liveIds = await liveRestaurantIds(db);
  const readStates = await readStatesOfKind(db, READ_KIND);
  const due = options.everyRecord === true ? liveIds : restaurantsDue(deps, liveIds, readStates);
  const budget = options.everyRecord === true ? undefined : await challengesAllowance(deps, due.length);
  // The most urgent lists first; the rest stay due for the next pass.
  const restaurantIds = budget === undefined ? due : due.slice(0, budget);
  // Read before paging: what the warehouse held is what this pass's reads are compared with.
  const previous = await loadChallengeStates(db);
  const readAt = clock.now();
  const { results, counts, lastError } = await readEveryRestaurant(deps, restaurantIds, options);
  await recordChallengeReads(deps, { previous, results, readStates, readAt });
  const judged = await judgeDeletions(deps, previous, results);
  const { plan, complete, seenAnywhere } = judged;
  let deletionsMarked = 0;
  if (plan.deletions.kind === 'marked' && plan.deletions.ids.length > 0) {
    const ids = plan.deletions.ids;
    deletionsMarked = await db.transaction().execute((trx) => markChallengesDeleted(trx, ids, clock.now()));
  }
  const incomplete = [...results].filter(([, r]) => !r.complete);
  const notVisited = restaurantIds.length - results.size;
  const details = {
    restaurants: liveIds.length,
    restaurantsDue: due.length,
    ...(budget === undefined ? {} : { budget, skippedForBudget: due.length - restaurantIds.length }),
    ...counts,
    seen: seenAnywhere.size,
    restaurantsComplete: complete.size,
    restaurantsIncomplete: incomplete.length,
    restaurantsNotVisited: notVisited,
    ...(incomplete.length === 0 ? {} : { firstIncomplete: incomplete[0]?.[1].incompleteReason }),
    ...summarizePlan(plan),
    ...(plan.deletions.kind === 'marked' ? { deletions: { marked: deletionsMarked } } : {}),
  };
  const allComplete = incomplete.length === 0 && notVisited === 0;
  if (!allComplete || plan.deletions.kind === 'suppressed') {
    logger.warn(
      {
        stream: STREAM,
        restaurantsIncomplete: incomplete.length + notVisited,
        deletions:
          plan.deletions.kind === 'suppressed' ? plan.deletions.detail : 'only for complete restaurants',
      },
      'challenges pass held back deletions',
    );
  }
  return {
    status: passStatus(restaurantIds.length, allComplete && plan.deletions.kind === 'marked', complete.size),
    rows: counts.written,
    requests: counts.pages + (lastError === undefined ? 0 : 1),
    details,
    ...(lastError === undefined ? {} : { error: lastError.message }),
  };
}

/**
 * The lists this pass may read: the challenges' allowance of the one budget over CHALLENGES_EVERY
 * (docs/rate-limit.md, "One budget"), a page each; never less than one list.
 */
async function challengesAllowance(deps: StreamDeps<PartnerApi>, dueLists: number): Promise<number> {
  if (dueLists === 0) return 0;
  const { allowance } = await streamAllowance(deps, STREAM, {
    intervalMs: deps.config.schedules.challengesMs,
    demand: dueLists,
  });
  return Math.max(1, allowance);
}

function restaurantsDue(deps: StreamDeps<PartnerApi>, liveIds: string[], readStates: ReadState[]): string[] {
  return dueRecordIds({
    kind: READ_KIND,
    ids: liveIds,
    states: readStates,
    nowMs: deps.clock.now().getTime(),
    cadence: deps.config.freshness.cadences[READ_KIND],
    untilNextPassMs: deps.config.schedules.challengesMs,
  });
}

/** Each restaurant's challenge list read to its end (readSnapshotList); stops after repeated API failures. */
async function readEveryRestaurant(
  deps: StreamDeps<PartnerApi>,
  restaurantIds: readonly string[],
  options: SnapshotPassOptions,
) {
  const { api, config, logger, signal } = deps;
  const counts = { pages: 0, written: 0, rejected: 0, newVersions: 0 };
  const results = new Map<string, RestaurantChallenges>();
  let consecutiveFailures = 0;
  let lastError: PartnerApiError | undefined;
  let drift: DriftCount[] = [];
  for (const restaurantId of restaurantIds) {
    if (consecutiveFailures >= MAX_CONSECUTIVE_FAILURES) break;
    const read = await readSnapshotList(deps, {
      stream: STREAM,
      pages: api.challengePages(restaurantId, { pageSize: config.api.pageSize, signal }),
      writeRecords: (trx, challenges, seenAt) =>
        upsertChallengePage(trx, restaurantId, challenges, seenAt, options),
      contentHash: (challenge, seenAt) => challengeRow(challenge, restaurantId, seenAt).content_hash,
    });
    results.set(restaurantId, {
      seen: read.seen,
      newVersions: read.newVersions,
      complete: read.incompleteReason === undefined,
      ...(read.incompleteReason === undefined ? {} : { incompleteReason: read.incompleteReason }),
    });
    counts.pages += read.pages;
    counts.written += read.written;
    counts.rejected += read.rejected;
    counts.newVersions += read.newVersions;
    drift = mergeDriftCounts(drift, read.drift);
    if (read.interruption === undefined) {
      consecutiveFailures = 0;
      continue;
    }
    lastError = read.interruption;
    consecutiveFailures++;
    logger.warn(
      { stream: STREAM, restaurantId, err: read.interruption },
      'challenge paging failed for a restaurant',
    );
  }
  // One upsert per pass, not per restaurant (docs/schema-drift.md).
  await noteSchemaDrift(deps, 'challenges', drift);
  return { results, counts, lastError };
}

/**
 * What each restaurant's complete read teaches the cadence: a change is a new version, a challenge
 * new to the warehouse, or one it held live that the list no longer shows. An incomplete read is
 * not recorded, so the restaurant stays due.
 */
async function recordChallengeReads(
  deps: StreamDeps<PartnerApi>,
  input: {
    previous: ReadonlyMap<string, ChallengeState>;
    results: ReadonlyMap<string, RestaurantChallenges>;
    readStates: readonly ReadState[];
    readAt: Date;
  },
): Promise<void> {
  const cadence = deps.config.freshness.cadences[READ_KIND];
  const intervals = new Map(input.readStates.map((state) => [state.recordId, state.intervalMs]));
  const heldLive = new Map<string, Set<string>>();
  for (const [id, state] of input.previous) {
    if (state.deleted) continue;
    const ids = heldLive.get(state.restaurantId) ?? new Set<string>();
    heldLive.set(state.restaurantId, ids.add(id));
  }
  const reads = [...input.results]
    .filter(([, result]) => result.complete)
    .map(([restaurantId, result]) => {
      const held = heldLive.get(restaurantId) ?? new Set<string>();
      const sameIds = held.size === result.seen.size && [...result.seen.keys()].every((id) => held.has(id));
      return learnedRead({
        kind: READ_KIND,
        recordId: restaurantId,
        previousIntervalMs: intervals.get(restaurantId) ?? null,
        changed: result.newVersions > 0 || !sameIds,
        cadence,
      });
    });
  await recordReads(deps.db, reads, input.readAt);
}

/**
 * Deletions are judged only among restaurants read completely; the short-pass guard compares what
 * they showed now with what the warehouse held live for them.
 */
async function judgeDeletions(
  deps: StreamDeps<PartnerApi>,
  previous: Map<string, ChallengeState>,
  results: ReadonlyMap<string, RestaurantChallenges>,
) {
  const { db, config } = deps;
  const complete = new Set([...results].filter(([, r]) => r.complete).map(([id]) => id));
  const previousOfComplete = new Map<string, PreviousRecord>(
    [...previous].filter(([, state]) => complete.has(state.restaurantId)),
  );
  const seen = new Map<string, string | null>();
  const seenAnywhere = new Set<string>();
  for (const [restaurantId, result] of results) {
    for (const [id, hash] of result.seen) {
      seenAnywhere.add(id);
      if (complete.has(restaurantId)) seen.set(id, hash);
    }
  }
  // A challenge that moved to a restaurant read incompletely was still seen: not a deletion.
  for (const id of seenAnywhere) if (!seen.has(id)) previousOfComplete.delete(id);
  const liveBefore = [...previousOfComplete.values()].filter((state) => !state.deleted).length;
  const baseline = await loadDeletionBaseline(db, STREAM, liveBefore);
  const plan = planSnapshotChanges(previousOfComplete, seen, {
    complete: true,
    maxDrop: config.snapshots.maxDrop,
    lastCompleteCount: liveBefore > 0 ? liveBefore : null,
    previousShortCount: baseline.previousShortCount ?? null,
  });
  return { plan, complete, seenAnywhere };
}

function passStatus(restaurants: number, clean: boolean, completeRestaurants: number): PassOutcome['status'] {
  if (restaurants === 0 || clean) return 'succeeded';
  return completeRestaurants > 0 ? 'partial' : 'failed';
}
