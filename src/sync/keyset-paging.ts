// Keyset paging of one check-in window, newest first: where each page request starts. Pure; the
// check-in stream (src/streams/checkins/page-to-end.ts) reads the pages and commits them.

/** Where a page request of a window starts: the exclusive `created_before` bound, a page number under it. */
export interface KeysetCursor {
  before: number;
  page: number;
}

/**
 * The next keyset bound inside a window: the feed is newest first, so after a page whose oldest
 * row is at `oldestSeen`, the rest of the window is [start, oldestSeen + 1 ms). The +1 ms keeps
 * rows that share the oldest timestamp (ties), which the caller de-duplicates by id.
 * Returns null when the page made no progress (every row on it had the same timestamp as the
 * current bound), where the caller falls back to page numbers for that instant.
 */
export function nextKeysetBound(currentBefore: number, oldestSeen: number): number | null {
  const next = oldestSeen + 1;
  return next < currentBefore ? next : null;
}

/**
 * The cursor after one page whose records were created at `createdAts`. Page numbers shift when
 * rows arrive above the read position, so instead of asking for page 1, 2, … the bound moves down
 * to the oldest row read (nextKeysetBound) and page 0 is asked again: rows arriving meanwhile are
 * newer than the bound and cannot push unread rows onto a page already passed. The page number
 * moves on only when the bound cannot (a whole page at one instant), or after the last page
 * (`done`), where the cursor is only the checkpoint of a finished read.
 */
export function advanceKeyset(
  cursor: KeysetCursor,
  createdAts: readonly number[],
  done: boolean,
): KeysetCursor {
  const oldest = createdAts.reduce((min, at) => Math.min(min, at), Number.POSITIVE_INFINITY);
  if (!done && Number.isFinite(oldest)) {
    const bound = nextKeysetBound(cursor.before, oldest);
    if (bound !== null) return { before: bound, page: 0 };
  }
  return { before: cursor.before, page: cursor.page + 1 };
}
