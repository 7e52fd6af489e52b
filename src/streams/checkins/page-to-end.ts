import { advanceKeyset, type KeysetCursor } from '../../sync/keyset-paging.js';
import { splitWindow, type Window } from '../../sync/windows.js';
import type { SyncWindow } from '../../warehouse/schema.js';
import { replaceWithParts } from './window-lifecycle.js';
import { describeWindow, type CheckinsDeps } from './deps.js';
import { WindowPageCommitter } from './page-commit.js';
import { WindowPageReader } from './page-reader.js';

/**
 * Reads one window from its checkpoint to its end, newest first, by keyset (advanceKeyset in
 * src/sync/keyset-paging.ts), committing each page with the next checkpoint (page-commit.ts).
 * The first page of an attempt may show the window too large: it is then split into parts
 * (replaceWithParts) and nothing is read.
 */
export async function pageToEnd(
  deps: CheckinsDeps,
  window: Window,
  row: SyncWindow,
): Promise<{ requests: number; rows: number; split?: Window[] }> {
  const reader = new WindowPageReader(deps, window);
  const committer = new WindowPageCommitter(deps, window, { firstRead: row.completed_at === null });
  let cursor: KeysetCursor = { before: row.cursor_before?.getTime() ?? window.end, page: row.cursor_page };
  let firstOfAttempt = row.first_total_count === null && cursor.page === 0 && cursor.before === window.end;
  let rows = 0;
  let pending = reader.fetch(cursor);
  try {
    return await readPages();
  } catch (error) {
    // A read told to stop (a shutdown deadline, a job handed back) writes the pages it holds with
    // their checkpoint, so that the next taker does not fetch them again. Its lease may be gone
    // already: then that write changes nothing and the pages are fetched again.
    if (deps.signal?.aborted === true) await committer.flush().catch(() => undefined);
    throw error;
  }

  async function readPages(): Promise<{ requests: number; rows: number; split?: Window[] }> {
    for (;;) {
      deps.signal?.throwIfAborted();
      const { seenAt } = pending;
      const page = await pending.result;
      const servedPageSize = reader.servedPageSize(page);
      if (firstOfAttempt) {
        const parts = await splitIfTooLarge(deps, window, page.pagination.totalCount, servedPageSize);
        if (parts !== null) return { requests: reader.requests, rows, split: parts };
      }
      const done = page.pagination.nextPage === null || page.records.length + page.rejections.length === 0;
      const createdAts = page.records.map((record) => record.createdAtMs);
      const next = advanceKeyset(cursor, createdAts, done);
      // The next page's bound is known now: fetch it while this page commits. Its rows cannot be
      // written before this page's checkpoint, and a crash re-fetches from that checkpoint anyway.
      if (!done) pending = reader.fetch(next);
      rows += await committer.commit(page, { seenAt, next, firstOfAttempt, last: done });
      if (done) return { requests: reader.requests, rows };
      cursor = next;
      firstOfAttempt = false;
    }
  }
}

/** Splits a window whose first page shows more rows than CHECKINS_SPLIT_PAGES pages hold; null when it fits. */
async function splitIfTooLarge(
  deps: CheckinsDeps,
  window: Window,
  total: number,
  servedPageSize: number,
): Promise<Window[] | null> {
  const parts = splitWindow(window, total, deps.config.checkins.splitPages * servedPageSize);
  if (parts.length <= 1) return null;
  await replaceWithParts(deps.db, window, parts);
  deps.logger.info({ window: describeWindow(window), total, parts: parts.length }, 'window too large; split');
  return parts;
}
