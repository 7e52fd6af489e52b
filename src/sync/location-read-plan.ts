import { dueReads, type Cadence, type ReadState } from './read-cadence.js';

// Which locations a locations pass reads, and which of their two kinds (docs/freshness.md,
// "Adaptive cadence (locations)"). Pure: the locations stream loads the locations and their read
// states and follows the plan.

export const LOCATION_KINDS = ['location.full', 'location.open_hours'] as const;
export type LocationKind = (typeof LOCATION_KINDS)[number];

/** A location as the warehouse holds it: `lastRefreshedAtMs` null when the feed brought it and nothing read it yet. */
export interface KnownLocation {
  id: string;
  lastRefreshedAtMs: number | null;
}

export interface LocationRead {
  id: string;
  /** The kinds due, in request order (the full form first: a 404 there makes the open hours moot). */
  kinds: LocationKind[];
}

export interface LocationReadPlan {
  reads: LocationRead[];
  /** Locations with at least one kind due (with `everyRecord`: every location). */
  due: number;
  /** Due locations whose reads did not fit the request budget: they wait for the next pass. */
  skippedForBudget: number;
}

/**
 * The locations to read now and, for each, the kinds due. Never refreshed first (the feed's new
 * locations: the check-ins follow-up relies on it), then by urgency (never read or past the
 * ceiling, then the most overdue: read-cadence's `dueReads`), a location taking all its due kinds
 * at once while they fit `requestBudget` (one request per kind). A location refreshed before it had
 * read states counts as read, both kinds, at `lastRefreshedAtMs`; one never refreshed is never read. `everyRecord` (resync): every
 * location, both kinds, whatever the cadence and the budget.
 */
export function planLocationReads(input: {
  locations: readonly KnownLocation[];
  states: readonly ReadState[];
  nowMs: number;
  cadenceOf: (kind: LocationKind) => Cadence;
  requestBudget: number;
  everyRecord?: boolean;
  /** The pass schedule: kinds that would pass their ceiling before the next pass are due now. */
  untilNextPassMs?: number;
}): LocationReadPlan {
  const neverRefreshed = new Set(
    input.locations.filter((l) => l.lastRefreshedAtMs === null).map((l) => l.id),
  );
  const firstNeverRefreshed = (a: string, b: string) =>
    Number(neverRefreshed.has(b)) - Number(neverRefreshed.has(a));
  if (input.everyRecord === true) {
    const ids = input.locations
      .map((l) => l.id)
      .sort((a, b) => firstNeverRefreshed(a, b) || compareIds(a, b));
    return {
      reads: ids.map((id) => ({ id, kinds: [...LOCATION_KINDS] })),
      due: ids.length,
      skippedForBudget: 0,
    };
  }
  const dueKinds = new Map<string, Set<LocationKind>>();
  const cadenceOf = (kind: string) => input.cadenceOf(kind as LocationKind);
  for (const read of dueReads(statesOf(input), input.nowMs, cadenceOf, input.untilNextPassMs)) {
    const kinds = dueKinds.get(read.recordId) ?? new Set<LocationKind>();
    dueKinds.set(read.recordId, kinds.add(read.kind as LocationKind));
  }
  // Map order is the order of each location's most urgent read: a location never refreshed is
  // never read (statesOf), so dueReads puts it first.
  const ordered = [...dueKinds.keys()];
  const reads: LocationRead[] = [];
  let left = Math.max(0, Math.floor(input.requestBudget));
  for (const id of ordered) {
    const due = dueKinds.get(id) ?? new Set<LocationKind>();
    const kinds = LOCATION_KINDS.filter((kind) => due.has(kind));
    if (kinds.length > left) continue;
    left -= kinds.length;
    reads.push({ id, kinds });
  }
  return { reads, due: ordered.length, skippedForBudget: ordered.length - reads.length };
}

/**
 * Every location's state of both kinds: never read while it was never refreshed (whatever a stale
 * read state says), else the stored state, else read at its last refresh.
 */
function statesOf(input: { locations: readonly KnownLocation[]; states: readonly ReadState[] }): ReadState[] {
  const stored = new Map(input.states.map((state) => [`${state.kind} ${state.recordId}`, state]));
  return input.locations.flatMap((location) =>
    LOCATION_KINDS.map(
      (kind): ReadState =>
        (location.lastRefreshedAtMs === null ? undefined : stored.get(`${kind} ${location.id}`)) ?? {
          kind,
          recordId: location.id,
          lastReadAtMs: location.lastRefreshedAtMs,
          lastChangedAtMs: null,
          intervalMs: null,
        },
    ),
  );
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
