// Pure planning for the check-in feed: which closed windows to page, how to split one that is
// too large, and how far the watermark may move. No I/O here; the stream calls these.

/** A half-open interval [start, end) of `created_at`, the API's own filter semantics:
 * `created_after` is inclusive and `created_before` exclusive, so adjacent windows never
 * share or miss a record. Times are epoch milliseconds. */
export interface Window {
  start: number;
  end: number;
}

/** Smallest window we split down to: below this, a large window is paged as is. */
export const MIN_SPLIT_MS = 60_000;

/**
 * Cuts [from, to) into windows on a grid of `windowMs` aligned to the Unix epoch, so the same
 * instant always falls in the same window whichever process plans it (deterministic job ids).
 * The first and last windows may be partial; nothing is planned when from >= to.
 */
export function planWindows(from: number, to: number, windowMs: number): Window[] {
  if (!(windowMs > 0)) throw new RangeError('windowMs must be positive');
  const windows: Window[] = [];
  let start = from;
  while (start < to) {
    const gridEnd = (Math.floor(start / windowMs) + 1) * windowMs;
    const end = Math.min(gridEnd, to);
    windows.push({ start, end });
    start = end;
  }
  return windows;
}

/**
 * Like planWindows, with history older than `fineFrom` cut on a coarser grid: those windows are
 * paged once and never re-checked by the look-back, so a few large windows do the work of many
 * small ones at a fraction of their round trips. [from, fineFrom) on the `historyWindowMs` grid,
 * [fineFrom, to) on the `windowMs` grid; both aligned to the epoch. A dense history window is
 * still split by `splitWindow` like any other.
 */
export function planWindowsWithHistory(
  from: number,
  to: number,
  grid: { windowMs: number; historyWindowMs: number; fineFrom: number },
): Window[] {
  const cut = Math.min(Math.max(grid.fineFrom, from), to);
  const historyMs = Math.max(grid.historyWindowMs, grid.windowMs);
  return [...planWindows(from, cut, historyMs), ...planWindows(cut, to, grid.windowMs)];
}

/**
 * Splits a window whose `total_count` is too large to page comfortably into `2^k` equal parts,
 * enough for each to hold about `targetRows`. Equal halves keep it deterministic; the caller
 * splits again if a part is still too large (the feed is not uniform).
 */
export function splitWindow(window: Window, totalCount: number, targetRows: number): Window[] {
  const length = window.end - window.start;
  if (totalCount <= targetRows || length < 2 * MIN_SPLIT_MS) return [window];
  let parts = 2;
  while (parts < 64 && totalCount / parts > targetRows && length / (parts * 2) >= MIN_SPLIT_MS) parts *= 2;
  const cuts = Array.from({ length: parts + 1 }, (_, i) =>
    i === parts ? window.end : window.start + Math.floor((length * i) / parts),
  );
  return cuts.slice(0, -1).map((start, i) => ({ start, end: cuts[i + 1] ?? window.end }));
}

/** A check-in window's life: planned, being paged, proven against total_count, or given up for now. */
export type WindowStatus = 'pending' | 'running' | 'complete' | 'failed';

export interface WindowState extends Window {
  status: WindowStatus;
}

/**
 * The low watermark: it moves from `watermark` across windows that are complete and contiguous,
 * and stops at the first gap or unfinished window. It never moves back.
 */
export function advanceWatermark(watermark: number, windows: readonly WindowState[]): number {
  const byStart = new Map<number, WindowState[]>();
  for (const window of windows) {
    const list = byStart.get(window.start) ?? [];
    list.push(window);
    byStart.set(window.start, list);
  }
  let current = watermark;
  for (;;) {
    // A re-paged complete window is "running" again but was complete once; the caller passes
    // only windows that matter for first completion, so any complete window from here advances.
    const next = byStart.get(current)?.find((window) => window.status === 'complete' && window.end > current);
    if (next === undefined) return current;
    current = next.end;
  }
}

/** A window is a key in sync_windows and a BullMQ job id: deterministic and free of ':'. */
export function windowKey(window: Window): string {
  return `${window.start}-${window.end}`;
}

/**
 * The complete windows to re-check on this pass: those overlapping the trailing look-back
 * [now − lookback, …) that have not been checked for `everyMs`. Re-checking costs one count
 * probe each; a window whose count moved, or that still holds ongoing visits, is re-paged by the
 * caller.
 */
export function lookbackWindows<T extends Window & { lastCheckedAt: number | null }>(
  complete: readonly T[],
  now: number,
  lookbackMs: number,
  everyMs: number,
): T[] {
  const since = now - lookbackMs;
  return complete.filter(
    (window) =>
      window.end > since && (window.lastCheckedAt === null || window.lastCheckedAt <= now - everyMs),
  );
}

export interface CompleteWindow extends Window {
  apiTotalCount: number;
}

/**
 * Grid cells that are exactly covered by several complete fragments (the tail windows that
 * frequent planning leaves, or the parts of a split) and can become one window again, so the
 * look-back and `verify` probe one window per cell instead of one per fragment. A cell is left
 * alone when merging would make a window too large to page comfortably (it would split again).
 */
export function mergeableCells(
  complete: readonly CompleteWindow[],
  windowMs: number,
  maxRows: number,
): Array<{ cell: Window; fragments: CompleteWindow[] }> {
  const byCell = new Map<number, CompleteWindow[]>();
  for (const window of complete) {
    const cellStart = Math.floor(window.start / windowMs) * windowMs;
    if (window.end > cellStart + windowMs) continue; // not inside one cell
    const list = byCell.get(cellStart) ?? [];
    list.push(window);
    byCell.set(cellStart, list);
  }
  const out: Array<{ cell: Window; fragments: CompleteWindow[] }> = [];
  for (const [cellStart, fragments] of byCell) {
    if (fragments.length < 2) continue;
    const sorted = [...fragments].sort((a, b) => a.start - b.start);
    const cell = { start: cellStart, end: cellStart + windowMs };
    const covers =
      sorted[0]?.start === cell.start &&
      sorted.at(-1)?.end === cell.end &&
      sorted.every((w, i) => i === 0 || sorted[i - 1]?.end === w.start);
    const rows = sorted.reduce((sum, w) => sum + w.apiTotalCount, 0);
    if (covers && rows <= maxRows) out.push({ cell, fragments: sorted });
  }
  return out.sort((a, b) => a.cell.start - b.cell.start);
}
