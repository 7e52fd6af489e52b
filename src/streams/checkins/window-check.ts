import type { Window } from '../../sync/windows.js';
import { countWindowRows, type WindowCounts } from '../../warehouse/check-ins.js';
import type { SyncWindow } from '../../warehouse/schema.js';
import { markChecked, markVerified, resetForRepage } from './window-lifecycle.js';
import type { CheckinsDeps } from './deps.js';

// The check of a complete window shared by the look-back (lookback.ts) and `verify`
// (verify-windows.ts): probe its count, record a match on its row, re-open it for re-paging when
// the counts differ.

/** One window's count in the API against the warehouse's live rows plus its rejections. */
export interface WindowProbe {
  apiTotal: number;
  warehouse: number;
  rejected: number;
  matches: boolean;
}

/**
 * The one-request check: a `page_size=1` count of the window in the API, compared with the
 * warehouse's live rows plus the window's rejected records.
 */
export async function probeWindow(
  deps: Pick<CheckinsDeps, 'db' | 'api' | 'signal'>,
  row: SyncWindow,
  counts?: WindowCounts,
): Promise<WindowProbe> {
  const ours = counts ?? (await countWindowRows(deps.db, row.window_start, row.window_end, null));
  const apiTotal = await deps.api.countCheckIns({
    createdAfter: row.window_start,
    createdBefore: row.window_end,
    signal: deps.signal,
  });
  return {
    apiTotal,
    warehouse: ours.total,
    rejected: row.rows_rejected,
    matches: apiTotal === ours.total + row.rows_rejected,
  };
}

/**
 * Probes a window and records a match on its row: `checked` by the look-back (with the API's count;
 * paces the next look-back), `verified` by `verify`. `at` is when the match is recorded (default:
 * the clock once the probe has answered).
 */
export async function probeAndRecord(
  deps: Pick<CheckinsDeps, 'db' | 'api' | 'clock' | 'signal'>,
  row: SyncWindow,
  window: Window,
  record: { as: 'checked' | 'verified'; at?: Date; counts?: WindowCounts },
): Promise<WindowProbe> {
  const probe = await probeWindow(deps, row, record.counts);
  if (!probe.matches) return probe;
  const at = record.at ?? deps.clock.now();
  if (record.as === 'checked') await markChecked(deps.db, window, at, probe.apiTotal);
  else await markVerified(deps.db, window, at);
  return probe;
}

/**
 * Re-opens a complete window to be paged again from its first page, giving the reason (recorded
 * on its row). A window no longer complete (a process is paging it, or it was re-opened) is left.
 */
export async function reopenForRepage(
  deps: Pick<CheckinsDeps, 'db'>,
  window: Window,
  reason: string,
  now: Date,
): Promise<void> {
  await resetForRepage(deps.db, window, { now, reason, countAsRepage: false, onlyIf: 'complete' });
}
