import { exponentialBackoffMs } from '../../sync/backoff.js';
import type { Window } from '../../sync/windows.js';
import type { Executor } from '../../warehouse/database.js';
import { failWindow, loadWindow } from '../../warehouse/sync-windows.js';
import { CHECKINS_TUNING } from './tuning.js';

// The check-in window lifecycle, in one place: the states a window's row in rewards.sync_windows
// goes through, the transitions between them, and the retry policy. The drivers (jobs/checkins-plan.ts
// and jobs/checkins-window.ts through window-jobs.ts, `run` through pass.ts, `resync` through
// resync.ts, `backfill` and `verify`) only choose which windows run; every state change goes
// through here. The SQL of each transition is in src/warehouse/sync-windows.ts, below the streams.
//
//   planned ──insertPlannedWindows──▶ pending ──beginAttempt──▶ running ──completeWindow──▶ complete
//   running ──replaceWithParts──▶ (gone: its 2^k parts are pending)
//   running ──failAttempt (retryDelayMs)──▶ failed ──due again──▶ running
//   running ──releaseWindow (shutdown)──▶ pending, checkpoint kept
//   complete ──markChecked (look-back) / markVerified (verify)──▶ complete, checked
//   complete ──resetForRepage (look-back, verify --repair, resync, a moved total_count)──▶ pending
//   complete fragments of one grid cell ──mergeCompleteFragments──▶ one complete window

export type { WindowStatus } from '../../sync/windows.js';
export type { SyncWindow } from '../../warehouse/schema.js';

// Transitions.
export {
  insertPlannedWindows,
  beginAttempt,
  recordPage,
  completeWindow,
  replaceWithParts,
  releaseWindow,
  resetForRepage,
  markChecked,
  markVerified,
  mergeCompleteFragments,
} from '../../warehouse/sync-windows.js';

// Reads: which windows are in which state.
export { loadWindow, windowsWithDropToConfirm } from '../../warehouse/sync-windows.js';
export {
  windowOf,
  windowsInRange,
  dueWindows,
  runningWindowsLeasedFrom,
  knownWindowsOverlapping,
} from '../../warehouse/sync-window-reads.js';

// The feed's own state beside its windows (the low watermark, the planned-up-to mark).
export {
  loadCheckinsState,
  saveCheckinsState,
  advanceStoredWatermark,
} from '../../warehouse/checkins-feed-state.js';

/** Backoff for a failed window: 30 s doubling per attempt, at most an hour (CHECKINS_TUNING.retry). */
export function retryDelayMs(attempts: number): number {
  const { firstMs, maxMs } = CHECKINS_TUNING.retry;
  return exponentialBackoffMs(attempts, firstMs, maxMs);
}

/** running → failed: the attempt's error recorded, due again after retryDelayMs of its attempts. */
export async function failAttempt(db: Executor, window: Window, message: string, now: Date): Promise<void> {
  const row = await loadWindow(db, window);
  await failWindow(db, window, message, now, retryDelayMs(row?.attempts ?? 1));
}
