import type { SyncWindow } from '../../warehouse/schema.js';

export interface BackfillProgress {
  windows: number;
  complete: number;
  failed: number;
  rows: number;
  /** Sum of the API's total_count over windows whose first page is known; null before any is. */
  expectedRows: number | null;
  done: boolean;
}

/** Progress of a backfill range from its window rows: done when every window is complete or failed. */
export function summarizeProgress(windows: readonly SyncWindow[]): BackfillProgress {
  const complete = windows.filter((w) => w.status === 'complete');
  const failed = windows.filter((w) => w.status === 'failed' && (w.attempts ?? 0) >= 3).length;
  const known = windows.filter((w) => w.api_total_count !== null);
  return {
    windows: windows.length,
    complete: complete.length,
    failed,
    rows: windows.reduce(
      (sum, w) => sum + (w.status === 'complete' ? (w.api_total_count ?? 0) : w.rows_seen),
      0,
    ),
    expectedRows: known.length === 0 ? null : known.reduce((sum, w) => sum + (w.api_total_count ?? 0), 0),
    done: windows.length > 0 && complete.length + failed === windows.length,
  };
}
