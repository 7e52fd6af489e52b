// Adaptive read cadence (docs/freshness.md): every kind of record is re-read on an interval learned
// from whether the last reads found it changed, within a floor and a ceiling, and the reads that
// are due are ordered so that the budget goes first to records past their ceiling, then to the
// most overdue, then to the recently active. Pure: the members, challenges and locations
// streams and the status read call it.

/** A member's kinds, in the order a member's reads are made. */
export const MEMBER_KINDS = [
  'member.profile',
  'member.status',
  'member.wallets',
  'member.tags',
  'member.visits',
  'member.memberships',
] as const;

/**
 * The kinds of record read on an adaptive cadence (the simulator's truth kinds use the same names,
 * except `location.full`: its `location`).
 */
export const READ_KINDS = [
  ...MEMBER_KINDS,
  'restaurant.challenges',
  'location.full',
  'location.open_hours',
] as const;
export type ReadKind = (typeof READ_KINDS)[number];

export function isReadKind(value: string): value is ReadKind {
  return (READ_KINDS as readonly string[]).includes(value);
}

export interface Cadence {
  floorMs: number;
  ceilingMs: number;
}

/**
 * A change halves the interval, a read that found nothing new stretches it by half. At the steady
 * state a record is read about once per change it makes (a change on ~40 % of reads: ln 1.5 /
 * ln 3), so an active record is read often and a quiet one drifts to its ceiling.
 */
export const SOONER_AFTER_CHANGE = 0.5;
export const LATER_AFTER_NO_CHANGE = 1.5;

export function clampInterval(ms: number, cadence: Cadence): number {
  const floor = Math.min(cadence.floorMs, cadence.ceilingMs);
  return Math.round(Math.min(cadence.ceilingMs, Math.max(floor, ms)));
}

/**
 * The interval after a record's first read: its ceiling. The first read finds everything new, so
 * it says nothing about how often the record changes; starting at the ceiling and learning downward
 * from the changes later reads find keeps a crowd of new members from flooding the budget.
 */
export function initialInterval(cadence: Cadence): number {
  return clampInterval(cadence.ceilingMs, cadence);
}

/**
 * Where in [ceiling / 2, ceiling] a record's first interval falls, fixed per record (a hash of its
 * key): members connected together would otherwise all come due in the same pass, again and again.
 */
export function firstIntervalSpread(key: string): number {
  let hash = 0x811c9dc5; // FNV-1a, 32 bits
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193) >>> 0;
  // murmur3's finalizer: keys that differ in one character end up far apart.
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b) >>> 0;
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35) >>> 0;
  hash = (hash ^ (hash >>> 16)) >>> 0;
  return 0.5 + 0.5 * (hash / 0xffffffff);
}

/**
 * The interval after a read: shorter when it found a change, longer when it did not; after the
 * first read, the ceiling times `spread` (firstIntervalSpread).
 */
export function nextReadInterval(
  previousMs: number | null,
  changed: boolean,
  cadence: Cadence,
  spread = 1,
): number {
  if (previousMs === null || !(previousMs > 0))
    return clampInterval(initialInterval(cadence) * Math.min(1, Math.max(0.5, spread)), cadence);
  return clampInterval(previousMs * (changed ? SOONER_AFTER_CHANGE : LATER_AFTER_NO_CHANGE), cadence);
}

/** The read to record for one record: the interval learned from whether this read found a change. */
export function learnedRead(input: {
  kind: ReadKind;
  recordId: string;
  previousIntervalMs: number | null;
  changed: boolean;
  cadence: Cadence;
}) {
  const spread = firstIntervalSpread(`${input.kind} ${input.recordId}`);
  return {
    kind: input.kind,
    recordId: input.recordId,
    changed: input.changed,
    intervalMs: nextReadInterval(input.previousIntervalMs, input.changed, input.cadence, spread),
  };
}

/** What the warehouse knows of one record's reads (rewards.record_reads). */
export interface ReadState {
  kind: ReadKind;
  recordId: string;
  lastReadAtMs: number | null;
  lastChangedAtMs: number | null;
  intervalMs: number | null;
}

/** When the record is due next: at once when never read, never later than its ceiling. */
export function dueAtMs(state: ReadState, cadence: Cadence): number {
  if (state.lastReadAtMs === null) return Number.NEGATIVE_INFINITY;
  const interval =
    state.intervalMs === null ? initialInterval(cadence) : clampInterval(state.intervalMs, cadence);
  return state.lastReadAtMs + interval;
}

export interface DueRead extends ReadState {
  /** Read longer ago than the ceiling allows (or never read): taken before anything else. */
  pastCeiling: boolean;
  /** Age over interval: 1 is just due, 2 is one whole interval late. */
  lateness: number;
}

/**
 * The reads due at `nowMs`, most urgent first: never read or at their ceiling, then the latest
 * relative to their own interval, then the most recently changed (recently active members first),
 * then by id for a stable order. `untilNextPassMs` (the pass schedule): a record that would pass its
 * ceiling before the next pass is read now, a little early, and counts as at its ceiling, so that
 * passes at intervals keep every record within its ceiling when the budget allows.
 */
export function dueReads(
  states: readonly ReadState[],
  nowMs: number,
  cadenceOf: (kind: ReadKind) => Cadence,
  untilNextPassMs = 0,
): DueRead[] {
  const due: DueRead[] = [];
  for (const state of states) {
    const cadence = cadenceOf(state.kind);
    if (state.lastReadAtMs === null) {
      due.push({ ...state, pastCeiling: true, lateness: Number.POSITIVE_INFINITY });
      continue;
    }
    const atCeiling = state.lastReadAtMs + cadence.ceilingMs <= nowMs + Math.max(0, untilNextPassMs);
    if (dueAtMs(state, cadence) > nowMs && !atCeiling) continue;
    const age = nowMs - state.lastReadAtMs;
    const interval =
      state.intervalMs === null ? initialInterval(cadence) : clampInterval(state.intervalMs, cadence);
    due.push({ ...state, pastCeiling: atCeiling, lateness: age / interval });
  }
  return due.sort(compareUrgency);
}

function compareUrgency(a: DueRead, b: DueRead): number {
  if (a.pastCeiling !== b.pastCeiling) return a.pastCeiling ? -1 : 1;
  if (a.lateness !== b.lateness) return b.lateness > a.lateness ? 1 : -1;
  const changedA = a.lastChangedAtMs ?? Number.NEGATIVE_INFINITY;
  const changedB = b.lastChangedAtMs ?? Number.NEGATIVE_INFINITY;
  if (changedA !== changedB) return changedB > changedA ? 1 : -1;
  if (a.recordId !== b.recordId) return a.recordId < b.recordId ? -1 : 1;
  return a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0;
}
