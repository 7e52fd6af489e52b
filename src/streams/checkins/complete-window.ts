import { confirmedDropBefore, nextDropSuspicion } from '../../sync/drop-guard.js';
import type { Window } from '../../sync/windows.js';
import { relaxCommitDurability } from '../../warehouse/check-in-pages.js';
import { unseenWindowRows } from '../../warehouse/check-ins.js';
import { settleRollupOfWindow } from '../../warehouse/check-ins-daily.js';
import type { Executor } from '../../warehouse/database.js';
import type { SyncWindow } from '../../warehouse/schema.js';
import { completeWindow } from './window-lifecycle.js';
import { rangeOf, type CheckinsDeps } from './deps.js';

/**
 * Every row of the window was met in this attempt, so rows not met are gone from the API, or the
 * API answered short for a moment. They are marked deleted only when an earlier read, at least
 * CHECKINS_DELETE_CONFIRM_AFTER before, missed them too (src/sync/drop-guard.ts).
 */
export async function completeConsistentWindow(
  deps: CheckinsDeps,
  window: Window,
  row: SyncWindow,
  read: { apiTotal: number; attemptStart: Date; now: Date; unseen: number },
): Promise<{ deleted: number; suspected: number }> {
  const state = {
    suspectedAt: row.drop_suspected_at?.getTime() ?? null,
    attemptStart: read.attemptStart.getTime(),
    confirmAfterMs: deps.config.checkins.deleteConfirmAfterMs,
  };
  const complete = (executor: Executor, deleted: number) => {
    // Rows marked deleted were among the unseen ones; the rest are still suspected.
    const suspected = read.unseen - deleted;
    const next = nextDropSuspicion(state, suspected);
    return completeWindow(executor, window, {
      apiTotalCount: read.apiTotal,
      rowsRemoved: deleted,
      dropSuspectedAt: next === null ? null : new Date(next),
      now: read.now,
    }).then(() => ({ deleted, suspected }));
  };
  const confirmedBefore = confirmedDropBefore(state);
  const outcome =
    confirmedBefore === null || read.unseen === 0
      ? await complete(deps.db, 0)
      : await deps.db.transaction().execute(async (trx) => {
          await relaxCommitDurability(trx);
          return complete(
            trx,
            await unseenWindowRows(trx, rangeOf(window), new Date(confirmedBefore), read.now),
          );
        });
  // The pages left check_ins_daily's medians of their groups unsettled (read from the rows until
  // now): stored once here, when the window's days have no window left to page (migration 0013).
  await settleRollupOfWindow(deps.db, rangeOf(window));
  return outcome;
}
