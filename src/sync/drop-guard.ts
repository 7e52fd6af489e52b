/**
 * Deleting check-ins on one read's word is how a brief empty answer from the API (`check_ins: []`,
 * total_count 0) would wipe a window. So a consistent paging that misses rows the warehouse holds
 * only *suspects* a drop, remembering when the missing read began; the rows are marked deleted
 * only when a later consistent read, at least CHECKINS_DELETE_CONFIRM_AFTER after the first began,
 * misses them too (last seen before the first read began = missed by both).
 */

export interface DropState {
  /** Start of the first read that missed rows, if a suspicion is open. */
  suspectedAt: number | null;
  /** Start of the read that has just completed consistently. */
  attemptStart: number;
  confirmAfterMs: number;
}

/** Rows last seen before this instant are confirmed gone; null when nothing is confirmable yet. */
export function confirmedDropBefore(state: DropState): number | null {
  if (state.suspectedAt === null) return null;
  return state.attemptStart - state.suspectedAt >= state.confirmAfterMs ? state.suspectedAt : null;
}

/** The suspicion to keep after this read, given how many live rows it still missed. */
export function nextDropSuspicion(state: DropState, stillUnseen: number): number | null {
  if (stillUnseen === 0) return null;
  // A confirmed suspicion is spent; rows this read alone missed start a new one.
  if (confirmedDropBefore(state) !== null) return state.attemptStart;
  return state.suspectedAt ?? state.attemptStart;
}
