// Pure planning for `rewards-etl resync` (docs/resync.md): which check-in windows and which payment
// intents a re-sync of a range covers, and when it is done. No I/O here; src/streams/resync-*.ts
// read the rows and call these.

import { windowKey, type Window } from './windows.js';

/**
 * The range a re-sync covers: half-open [from, to) of `created_at`, the API's own filter
 * semantics. An open end (null) reaches as far as the warehouse holds.
 */
export interface ResyncRange {
  from: number | null;
  to: number | null;
}

/** Whether an instant lies in the range (an open end reaches everything on its side). */
export function inResyncRange(at: number, range: ResyncRange): boolean {
  return (range.from === null || at >= range.from) && (range.to === null || at < range.to);
}

/** Whether a window holds any instant of the range: a window only partly inside it is re-paged whole. */
export function overlapsResyncRange(window: Window, range: ResyncRange): boolean {
  // An empty range (from at or after to) holds no instant, so no window shares one with it.
  if (range.from !== null && range.to !== null && range.from >= range.to) return false;
  return (range.from === null || window.end > range.from) && (range.to === null || window.start < range.to);
}

/**
 * The check-in windows still to re-page: every window overlapping the range, whatever its state
 * (complete ones too), that this re-sync has not re-paged yet (`done`, by window key). A window the
 * planner merged or split meanwhile has a new key and is re-paged again: more reads, never fewer.
 * Oldest first, so the bar moves through the range in order.
 */
export function windowsToResync<W extends Window>(
  windows: readonly W[],
  range: ResyncRange,
  done: ReadonlySet<string>,
): W[] {
  return windows
    .filter((window) => overlapsResyncRange(window, range) && !done.has(windowKey(window)))
    .sort((a, b) => a.start - b.start || a.end - b.end);
}

/** A stored payment intent as the re-sync plan needs it. */
export interface StoredIntentRef {
  id: string;
  /** Null when no form that carried it was ever stored. */
  createdAt: number | null;
}

export interface IntentResyncPlan {
  /** Ids to re-read by id, oldest created first (ties by id, so a re-run takes the same order). */
  ids: string[];
  /**
   * Stored intents with no `created_at` (nothing stored carried one): they belong to no range, so
   * they are re-read only by a re-sync without `--from`/`--to`, and counted here otherwise.
   */
  undated: number;
}

/** Which stored intents a re-sync of `range` re-reads: every one created in it. */
export function planIntentResync(stored: readonly StoredIntentRef[], range: ResyncRange): IntentResyncPlan {
  const open = range.from === null && range.to === null;
  const dated = stored
    .filter((intent) => intent.createdAt !== null && inResyncRange(intent.createdAt, range))
    .sort((a, b) => (a.createdAt ?? 0) - (b.createdAt ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const undated = stored.filter((intent) => intent.createdAt === null);
  return {
    ids: [...dated.map((intent) => intent.id), ...(open ? undated.map((intent) => intent.id).sort() : [])],
    undated: open ? 0 : undated.length,
  };
}

/**
 * Checks the range given on the command line: `from` before `to`, and, when check-ins are re-synced
 * (`latestClosed` given), `to` not after the newest closed instant (now − CHECKINS_SAFETY_LAG; a
 * window still open is the workers' to plan). Returns the problem, or null when the range is usable.
 */
export function resyncRangeProblem(range: ResyncRange, latestClosed: number | null): string | null {
  if (latestClosed !== null && range.to !== null && range.to > latestClosed)
    return `--to must be at or before now minus CHECKINS_SAFETY_LAG (${new Date(latestClosed).toISOString()}) to re-sync checkins`;
  const to = range.to ?? latestClosed;
  if (range.from !== null && to !== null && range.from >= to) return '--from must be before --to';
  return null;
}

/** What a re-sync reports as it goes (the CLI's progress bar): units done of the units known so far. */
export interface ResyncProgressUpdate {
  done: number;
  total: number;
  /** What is counted: `windows`, `intents`, `locations`, `members`, … */
  unit: string;
}

export type ResyncProgress = (update: ResyncProgressUpdate) => void;
