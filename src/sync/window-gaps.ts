import type { Window } from './windows.js';

/**
 * The parts of `range` that no window in `known` covers, in order. `known` is sorted by start and
 * may overlap `range` only in part, or overlap itself; the planner cuts only these parts into new
 * windows, so a backfill over an already-synced period adds windows for its gaps alone.
 */
export function gaps(range: Window, known: readonly Window[]): Window[] {
  const out: Window[] = [];
  let cursor = range.start;
  for (const window of known) {
    if (window.start > cursor) out.push({ start: cursor, end: Math.min(window.start, range.end) });
    cursor = Math.max(cursor, window.end);
    if (cursor >= range.end) break;
  }
  if (cursor < range.end) out.push({ start: cursor, end: range.end });
  return out.filter((gap) => gap.start < gap.end);
}
