import type { PartnerApiError } from '../api/errors.js';
import { LOCATIONS_SHARE } from '../sync/budget-allocation.js';
import type { PartnerApi } from '../api/partner-api.js';
import type { Config } from '../config.js';
import { driftOf } from '../records/parse.js';
import { DriftTally } from '../records/schema-drift.js';
import {
  countLocations,
  markLocationGone,
  stalestLocationIds,
  upsertOpenHours,
  writeLocations,
} from '../warehouse/locations.js';
import { storeRejections } from '../warehouse/rejected-records.js';
import { stopsThePass } from './pass-stop.js';
import { isPassInterruption } from './snapshot-list.js';
import type { StreamName } from './registry.js';
import { noteSchemaDrift } from './schema-drift.js';
import type { PassOutcome, StreamDeps } from './stream.js';

const STREAM = 'locations' satisfies StreamName;

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
 * schedule interval, capped at ten minutes' worth. With the defaults (10 rps, every 24h) that is
 * 750 per pass; the stalest go first, so every location is reached in turn.
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
}

/** Drift summed over a pass, per resource: one upsert each at the end (docs/schema-drift.md). */
interface LocationDrift {
  locations: DriftTally;
  openHours: DriftTally;
}

/** One location's full form, then its open hours (none when it is gone); counts what it sent and wrote. */
async function refreshLocation(
  deps: StreamDeps<PartnerApi>,
  id: string,
  counts: LocationCounts,
  sent: { requests: number },
  drift: LocationDrift,
): Promise<void> {
  const { db, api, clock, metrics, signal } = deps;
  // When the request started: what it answers is at least this fresh (the stale-write guard orders reads by it).
  const at = clock.now();
  sent.requests++;
  const location = await api.getLocation(id, { signal });
  if (location === null) {
    await db.transaction().execute((trx) => markLocationGone(trx, id, at));
    counts.gone++;
    return;
  }
  drift.locations.add(driftOf(location));
  if (!location.ok) {
    // Stamp the attempt anyway, so one malformed location cannot hold the head of the queue.
    await db.transaction().execute(async (trx) => {
      await storeRejections(trx, STREAM, [location.rejection], at);
      await trx
        .updateTable('rewards.locations')
        .set({ last_refreshed_at: at })
        .where('id', '=', id)
        .execute();
    });
    counts.rejected++;
    metrics.recordsRejected.inc({ stream: STREAM });
  } else {
    const written = await db
      .transaction()
      .execute((trx) => writeLocations(trx, [location.record], at, { refreshed: true }));
    counts.refreshed++;
    counts.newVersions += written.newVersions;
    metrics.rowsIngested.inc({ stream: STREAM });
  }
  sent.requests++;
  const hours = await api.getLocationOpenHours(id, { signal });
  if (hours !== null) drift.openHours.add(driftOf(hours));
  if (hours?.ok === true) {
    await upsertOpenHours(db, id, hours.record.hours, clock.now());
    counts.openHours++;
  } else if (hours?.ok === false) {
    await storeRejections(db, 'location_open_hours', [hours.rejection], clock.now());
  }
}

export interface LocationsPassOptions {
  /** Overrides the budget derived from the configuration. */
  budget?: number;
}

/**
 * Refreshes the stalest known locations (ids come from the check-in feed, which writes them with
 * `upsertEmbeddedLocations`) via `GET /locations/{id}` and their open hours. The reduced form
 * updates only the fields it carries; a 404 marks the location gone.
 */
export async function runLocationsPass(
  deps: StreamDeps<PartnerApi>,
  options: LocationsPassOptions = {},
): Promise<PassOutcome> {
  const { db, logger, signal } = deps;
  const budget = options.budget ?? locationRefreshBudget(deps.config);
  const ids = await stalestLocationIds(db, budget);
  const counts: LocationCounts = {
    refreshed: 0,
    gone: 0,
    rejected: 0,
    failed: 0,
    newVersions: 0,
    openHours: 0,
  };
  const sent = { requests: 0 };
  let consecutiveFailures = 0;
  let lastError: PartnerApiError | undefined;

  const drift: LocationDrift = { locations: new DriftTally(), openHours: new DriftTally() };
  for (const id of ids) {
    if (consecutiveFailures >= MAX_CONSECUTIVE_FAILURES) break;
    try {
      await refreshLocation(deps, id, counts, sent, drift);
      consecutiveFailures = 0;
    } catch (error) {
      if (stopsThePass(error) || !isPassInterruption(error, signal)) throw error;
      lastError = error;
      counts.failed++;
      consecutiveFailures++;
      logger.warn({ stream: STREAM, err: error }, 'location refresh failed; moving on');
    }
  }
  await noteSchemaDrift(deps, 'locations', drift.locations.counts());
  await noteSchemaDrift(deps, 'location_open_hours', drift.openHours.counts());

  const known = await countLocations(db);
  const details = {
    budget,
    planned: ids.length,
    ...counts,
    stoppedEarly: consecutiveFailures >= MAX_CONSECUTIVE_FAILURES,
    known: known.total,
    neverRefreshed: known.neverRefreshed,
  };
  const status =
    counts.failed === 0 ? 'succeeded' : counts.refreshed + counts.gone > 0 ? 'partial' : 'failed';
  return {
    status,
    rows: counts.refreshed,
    requests: sent.requests,
    details,
    ...(lastError === undefined ? {} : { error: lastError.message }),
  };
}
