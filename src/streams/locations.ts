import type { PartnerApiError } from '../api/errors.js';
import { LOCATIONS_SHARE } from '../sync/budget-allocation.js';
import type { PartnerApi } from '../api/partner-api.js';
import type { Config } from '../config/config.js';
import { driftOf } from '../records/parse.js';
import { DriftTally } from '../records/schema-drift.js';
import { planLocationReads, type LocationRead } from '../sync/location-read-plan.js';
import type { ReadState } from '../sync/read-cadence.js';
import { learnedRead } from '../sync/read-cadence.js';
import {
  countLocations,
  locationRefreshStates,
  markLocationGone,
  upsertOpenHours,
  writeLocations,
} from '../warehouse/locations.js';
import { readStatesOfKind, recordReads } from '../warehouse/record-reads.js';
import { storeRejections } from '../warehouse/rejected-records.js';
import { stopsThePass } from './pass-stop.js';
import { isPassInterruption } from './snapshot-list.js';
import { STREAM_NAME } from '../sync/stream-facts.js';
import { noteSchemaDrift } from './schema-drift.js';
import type { PassOutcome, SnapshotPassOptions, StreamDeps } from './stream.js';

const STREAM = STREAM_NAME.locations;

/** Requests one location refresh costs: the location and its open hours. */
const REQUESTS_PER_LOCATION = 2;
/** Share of the shared rate limit a locations pass may plan to use, so the feed keeps the rest. */
const RATE_SHARE = LOCATIONS_SHARE;
/** A pass is planned to fit in this much time at that share, however long the schedule interval. */
const MAX_PASS_MS = 10 * 60_000;
/** Consecutive API failures after which the pass stops: the API is down, the rest can wait. */
const MAX_CONSECUTIVE_FAILURES = 3;

/**
 * How many locations one pass refreshes: what a quarter of the shared rate limit allows within the
 * schedule interval, capped at ten minutes' worth. With the defaults (10 rps, every 1h) that is
 * 750 per pass. The pass spends it as `REQUESTS_PER_LOCATION` requests per location on the reads
 * due (a location whose open hours alone are due costs one).
 */
export function locationRefreshBudget(config: Pick<Config, 'api' | 'schedules'>): number {
  const seconds = Math.min(config.schedules.locationsMs, MAX_PASS_MS) / 1000;
  return Math.max(1, Math.floor((config.api.rateLimitRps * RATE_SHARE * seconds) / REQUESTS_PER_LOCATION));
}

interface LocationCounts {
  refreshed: number;
  gone: number;
  rejected: number;
  failed: number;
  newVersions: number;
  openHours: number;
  openHoursChanged: number;
}

/** Drift summed over a pass, per resource: one upsert each at the end (docs/schema-drift.md). */
interface LocationDrift {
  locations: DriftTally;
  openHours: DriftTally;
}

/** What one pass accumulates: counts, requests sent, drift. */
interface PassTally {
  counts: LocationCounts;
  sent: { requests: number };
  drift: LocationDrift;
}

function emptyTally(): PassTally {
  return {
    counts: {
      refreshed: 0,
      gone: 0,
      rejected: 0,
      failed: 0,
      newVersions: 0,
      openHours: 0,
      openHoursChanged: 0,
    },
    sent: { requests: 0 },
    drift: { locations: new DriftTally(), openHours: new DriftTally() },
  };
}

/** What a read of one kind found: `gone` (404 on the full form) makes the open hours moot. */
interface KindRead {
  changed: boolean;
  gone: boolean;
}

/** `GET /locations/{id}`: changed when it opened a new version or the location is newly gone (404). */
async function readFullForm(deps: StreamDeps<PartnerApi>, id: string, tally: PassTally): Promise<KindRead> {
  const { db, api, clock, metrics, signal } = deps;
  // When the request started: what it answers is at least this fresh (the stale-write guard orders reads by it).
  const at = clock.now();
  tally.sent.requests++;
  const location = await api.getLocation(id, { signal });
  if (location === null) {
    const marked = await db.transaction().execute((trx) => markLocationGone(trx, id, at));
    tally.counts.gone++;
    return { changed: marked.newlyGone, gone: true };
  }
  tally.drift.locations.add(driftOf(location));
  if (!location.ok) {
    // Stamp the attempt anyway (and record the read): one malformed location cannot hold the head of the queue.
    await db.transaction().execute(async (trx) => {
      await storeRejections(trx, STREAM, [location.rejection], at);
      await trx
        .updateTable('rewards.locations')
        .set({ last_refreshed_at: at })
        .where('id', '=', id)
        .execute();
    });
    tally.counts.rejected++;
    metrics.recordsRejected.inc({ stream: STREAM });
    return { changed: false, gone: false };
  }
  const written = await db
    .transaction()
    .execute((trx) => writeLocations(trx, [location.record], at, { refreshed: true }));
  tally.counts.refreshed++;
  tally.counts.newVersions += written.newVersions;
  metrics.rowsIngested.inc({ stream: STREAM });
  return { changed: written.newVersions > 0, gone: false };
}

/** `GET /locations/{id}/open_hours`: changed when the stored hours differ from before. */
async function readOpenHours(deps: StreamDeps<PartnerApi>, id: string, tally: PassTally): Promise<KindRead> {
  const { db, api, clock, signal } = deps;
  tally.sent.requests++;
  const hours = await api.getLocationOpenHours(id, { signal });
  if (hours === null) return { changed: false, gone: true };
  tally.drift.openHours.add(driftOf(hours));
  if (!hours.ok) {
    await storeRejections(db, 'location_open_hours', [hours.rejection], clock.now());
    return { changed: false, gone: false };
  }
  const stored = await upsertOpenHours(db, id, hours.record.hours, clock.now());
  tally.counts.openHours++;
  if (stored.changed) tally.counts.openHoursChanged++;
  return { changed: stored.changed, gone: false };
}

/**
 * One location's due kinds, the full form first (a 404 there records the open hours as read
 * without asking); each kind read is recorded on the cadence as it completes, so a failure leaves
 * only what it did not read due.
 */
async function readLocation(
  deps: StreamDeps<PartnerApi>,
  read: LocationRead,
  states: ReadonlyMap<string, ReadState>,
  tally: PassTally,
): Promise<void> {
  let gone = false;
  for (const kind of read.kinds) {
    const readAt = deps.clock.now();
    const found: KindRead = gone
      ? { changed: false, gone: true }
      : kind === 'location.full'
        ? await readFullForm(deps, read.id, tally)
        : await readOpenHours(deps, read.id, tally);
    gone = found.gone;
    const learned = learnedRead({
      kind,
      recordId: read.id,
      previousIntervalMs: states.get(`${kind} ${read.id}`)?.intervalMs ?? null,
      changed: found.changed,
      cadence: deps.config.freshness.cadences[kind],
    });
    await recordReads(deps.db, [learned], readAt);
  }
}

export interface LocationsPassOptions extends Pick<SnapshotPassOptions, 'everyRecord'> {
  /** Overrides the budget derived from the configuration (locations' worth of requests). */
  budget?: number;
}

/** The plan of this pass: the locations and kinds due, within the budget (`everyRecord`: all). */
async function planPass(deps: StreamDeps<PartnerApi>, budget: number, everyRecord: boolean) {
  const { db, clock, config } = deps;
  const known = await locationRefreshStates(db);
  const stored = [
    ...(await readStatesOfKind(db, 'location.full')),
    ...(await readStatesOfKind(db, 'location.open_hours')),
  ];
  const plan = planLocationReads({
    locations: known.map((l) => ({ id: l.id, lastRefreshedAtMs: l.lastRefreshedAt?.getTime() ?? null })),
    states: stored,
    nowMs: clock.now().getTime(),
    cadenceOf: (kind) => config.freshness.cadences[kind],
    requestBudget: budget * REQUESTS_PER_LOCATION,
    everyRecord,
    untilNextPassMs: config.schedules.locationsMs,
  });
  const states = new Map(stored.map((state) => [`${state.kind} ${state.recordId}`, state]));
  return { plan, states };
}

/**
 * Reads the locations whose full form or open hours are due on the adaptive cadence
 * (docs/freshness.md), within the budget, each kind only when due: `GET /locations/{id}` (the
 * reduced form updates only the fields it carries; a 404 marks the location gone) and its open
 * hours. Locations the check-in feed brought (`upsertEmbeddedLocations`) and nothing refreshed
 * yet go first. `everyRecord` (resync): every location, both kinds.
 */
export async function runLocationsPass(
  deps: StreamDeps<PartnerApi>,
  options: LocationsPassOptions = {},
): Promise<PassOutcome> {
  const { db, logger, signal } = deps;
  const budget = options.budget ?? locationRefreshBudget(deps.config);
  const { plan, states } = await planPass(deps, budget, options.everyRecord === true);
  const tally = emptyTally();
  let consecutiveFailures = 0;
  let lastError: PartnerApiError | undefined;
  for (const read of plan.reads) {
    if (consecutiveFailures >= MAX_CONSECUTIVE_FAILURES) break;
    try {
      await readLocation(deps, read, states, tally);
      consecutiveFailures = 0;
    } catch (error) {
      if (stopsThePass(error) || !isPassInterruption(error, signal)) throw error;
      lastError = error;
      tally.counts.failed++;
      consecutiveFailures++;
      logger.warn({ stream: STREAM, err: error }, 'location refresh failed; moving on');
    }
  }
  await noteSchemaDrift(deps, 'locations', tally.drift.locations.counts());
  await noteSchemaDrift(deps, 'location_open_hours', tally.drift.openHours.counts());

  const { counts } = tally;
  const known = await countLocations(db);
  const details = {
    budget,
    due: plan.due,
    planned: plan.reads.length,
    skippedForBudget: plan.skippedForBudget,
    fullFormsDue: plan.reads.filter((r) => r.kinds.includes('location.full')).length,
    openHoursDue: plan.reads.filter((r) => r.kinds.includes('location.open_hours')).length,
    ...counts,
    stoppedEarly: consecutiveFailures >= MAX_CONSECUTIVE_FAILURES,
    known: known.total,
    neverRefreshed: known.neverRefreshed,
  };
  const done = counts.refreshed + counts.gone + counts.openHours;
  const status = counts.failed === 0 ? 'succeeded' : done > 0 ? 'partial' : 'failed';
  return {
    status,
    rows: counts.refreshed,
    requests: tally.sent.requests,
    details,
    ...(lastError === undefined ? {} : { error: lastError.message }),
  };
}
