import { dueReads, type Cadence, type ReadKind, type ReadState } from './read-cadence.js';

// Which snapshot records a pass reads on the adaptive cadence (docs/freshness.md), and what it
// learns from the reads. Pure: the challenges stream loads the read states and follows the plan.

/**
 * The records of `kind` due at `nowMs`, most urgent first: every id in `ids` with no read state is
 * due at once (never read); states of ids not in `ids` (a restaurant since deleted) are ignored.
 */
export function dueRecordIds(input: {
  kind: ReadKind;
  ids: readonly string[];
  states: readonly ReadState[];
  nowMs: number;
  cadence: Cadence;
  /** The pass schedule: records that would pass their ceiling before the next pass are due now. */
  untilNextPassMs?: number;
}): string[] {
  const live = new Set(input.ids);
  const known = input.states.filter((state) => state.kind === input.kind && live.has(state.recordId));
  const read = new Set(known.map((state) => state.recordId));
  const unread: ReadState[] = input.ids
    .filter((id) => !read.has(id))
    .map((id) => ({
      kind: input.kind,
      recordId: id,
      lastReadAtMs: null,
      lastChangedAtMs: null,
      intervalMs: null,
    }));
  return dueReads([...unread, ...known], input.nowMs, () => input.cadence, input.untilNextPassMs).map(
    (due) => due.recordId,
  );
}
