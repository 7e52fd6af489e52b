import type { Window } from '../../sync/windows.js';
import { windowWithCounts, type WindowCounts } from '../../warehouse/check-ins.js';
import type { SyncWindow } from '../../warehouse/schema.js';
import { loadWindow, resetForRepage } from './window-lifecycle.js';
import { completeConsistentWindow } from './complete-window.js';
import { CHECKINS, describeWindow, rangeOf, type CheckinsDeps } from './deps.js';
import type { WindowOutcome } from './page-window.js';
import { pageToEnd } from './page-to-end.js';
import { CHECKINS_TUNING } from './tuning.js';

/** Re-pages of one window within an attempt before the attempt fails (and is retried later). */
const MAX_REPAGES = CHECKINS_TUNING.repagesPerAttempt;

/** What one read of the window left, against the API's total_count. */
interface AttemptTally {
  row: SyncWindow;
  counts: WindowCounts;
  /** The instant the attempt's counts were taken against. */
  attemptStart: Date;
  apiTotal: number;
  /** Rows seen in this attempt plus its rejections. */
  accounted: number;
  requests: number;
}

/**
 * Reads the window to its end (pageToEnd), then checks the rows seen in this attempt plus
 * rejections against the API's total_count. Equal: the window is complete. Otherwise the count
 * moved while paging (page numbers shifted), and the window is re-paged, at most MAX_REPAGES
 * times; what happened is recorded on its row.
 */
export async function pageAttempts(
  deps: CheckinsDeps,
  window: Window,
  started: SyncWindow,
): Promise<WindowOutcome> {
  let row = started;
  let requests = 0;
  for (let repage = 0; ; repage++) {
    const paged = await pageToEnd(deps, window, row);
    requests += paged.requests;
    if (paged.split !== undefined) return { status: 'split', window, parts: paged.split, requests };
    const tally = await tallyAttempt(deps, window);
    requests += tally.requests;
    ({ row } = tally);
    const now = deps.clock.now();
    if (tally.accounted === tally.apiTotal) {
      const { rows, removed } = await completeAttempt(deps, window, tally, now);
      return { status: 'complete', window, rows, requests, removed, repages: repage };
    }
    const { apiTotal, counts } = tally;
    const reason = `count moved while paging: api total_count ${apiTotal}, seen ${counts.seenSince} + ${row.rows_rejected} rejected`;
    if (repage >= MAX_REPAGES) throw new Error(`${reason}; gave up after ${MAX_REPAGES} re-pages`);
    deps.logger.info(
      { window: describeWindow(window), apiTotal, seen: counts.seenSince },
      'page shift detected; re-paging window',
    );
    await resetForRepage(deps.db, window, { now, reason, countAsRepage: true, status: 'running' });
    row = (await loadWindow(deps.db, window)) ?? row;
  }
}

/** The window's rows and checkpoint after a read; the API is asked again when the counts disagree. */
async function tallyAttempt(deps: CheckinsDeps, window: Window): Promise<AttemptTally> {
  const { db, api, clock, signal } = deps;
  const unrecordedStart = clock.now();
  const tally = await windowWithCounts(db, rangeOf(window), unrecordedStart);
  if (tally === undefined) throw new Error(`window ${describeWindow(window)} disappeared while paging`);
  const { row, counts } = tally;
  const accounted = counts.seenSince + row.rows_rejected;
  let apiTotal = row.first_total_count ?? -1;
  let requests = 0;
  if (accounted !== apiTotal) {
    // The count moved while we paged (late arrival, removal): ask again before deciding.
    apiTotal = await api.countCheckIns({
      createdAfter: new Date(window.start),
      createdBefore: new Date(window.end),
      signal,
    });
    requests++;
  }
  // The same instant the counts were taken against.
  const attemptStart = row.attempt_started_at ?? unrecordedStart;
  return { row, counts, attemptStart, apiTotal, accounted, requests };
}

/** Completes a window whose read met every row; logs what the drop guard did. */
async function completeAttempt(
  deps: CheckinsDeps,
  window: Window,
  tally: AttemptTally,
  now: Date,
): Promise<{ rows: number; removed: number }> {
  const { row, counts } = tally;
  const dropped = await completeConsistentWindow(deps, window, row, {
    apiTotal: tally.apiTotal,
    attemptStart: tally.attemptStart,
    now,
    // Live rows last seen before this attempt: the ones it did not meet.
    unseen: counts.total - counts.seenSince,
  });
  if (dropped.deleted > 0 || dropped.suspected > 0) {
    deps.logger.info(
      { window: describeWindow(window), deleted: dropped.deleted, suspected: dropped.suspected },
      dropped.deleted > 0
        ? 'check-ins missing from two reads were marked deleted'
        : 'check-ins missing from the feed; a later read confirms before anything is deleted',
    );
  }
  // Distinct rows of the window, not records read: keyset ties are read twice.
  deps.metrics.rowsIngested.inc({ stream: CHECKINS }, counts.seenSince);
  return { rows: counts.seenSince, removed: dropped.deleted };
}
