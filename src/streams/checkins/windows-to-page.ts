import { currentProcess, holderIsGone } from '../../leases/process-identity.js';
import type { SyncWindow } from '../../warehouse/schema.js';
import { dueWindows, runningWindowsLeasedFrom } from './window-lifecycle.js';
import type { CheckinsDeps } from './deps.js';

/**
 * The windows to page now: those due (dueWindows), plus running windows whose lease a process of
 * this host took and that process is gone (kill -9): taken over at once instead of after the
 * lease's TTL. Used by the planner job, `run checkins` and `backfill`.
 */
export async function windowsToPage(
  db: CheckinsDeps['db'],
  options: { ignoreBackoff?: boolean } = {},
): Promise<SyncWindow[]> {
  const due = await dueWindows(db, options);
  const self = currentProcess();
  if (self.hostKey === null) return due;
  const orphaned = (await runningWindowsLeasedFrom(db, self.hostKey)).filter((row) =>
    holderIsGone(self, { hostKey: self.hostKey, pid: row.lease_pid }),
  );
  if (orphaned.length === 0) return due;
  const known = new Set(due.map((row) => row.window_start.getTime()));
  return [...due, ...orphaned.filter((row) => !known.has(row.window_start.getTime()))].sort(
    (a, b) => a.window_start.getTime() - b.window_start.getTime(),
  );
}
