import pMap from 'p-map';
import type { SyncWindow } from '../../warehouse/schema.js';
import { windowOf, windowsInRange } from './window-lifecycle.js';
import { stopsThePass } from '../pass-stop.js';
import type { PassOutcome } from '../stream.js';
import { describeWindow, type CheckinsDeps } from './deps.js';
import { pageWindow, type WindowOutcome } from './page-window.js';
import { planAndRecheck } from './plan-and-recheck.js';
import { updateWatermark } from './watermark.js';
import { windowsToPage } from './windows-to-page.js';
import { CHECKINS_TUNING } from './tuning.js';

/** Rounds of due windows one pass takes (splits add new due windows). */
const MAX_ROUNDS = CHECKINS_TUNING.maxRounds.run;

/** What the windows paged in one foreground pass came to. */
export interface PagingTally {
  outcomes: Record<WindowOutcome['status'], number>;
  rows: number;
  requests: number;
}

/**
 * `run checkins`: a full pass in the foreground. Plans, re-checks every window of the look-back
 * (whatever CHECKINS_LOOKBACK_EVERY says), pages every due window in this process (failed ones
 * too, without waiting out their backoff), moves the watermark. Windows still failed at the end
 * are named in `problems`, so `run` can exit 1 naming them.
 */
export async function runCheckinsPass(
  deps: CheckinsDeps,
  options: { fullLookback?: boolean } = {},
): Promise<PassOutcome> {
  // `fullLookback: false` paces the look-back by CHECKINS_LOOKBACK_EVERY, as the worker does.
  const prepared = await planAndRecheck(deps, { fullLookback: options.fullLookback ?? true });
  const tally: PagingTally = {
    outcomes: { complete: 0, split: 0, failed: 0, skipped: 0, 'lease-lost': 0 },
    rows: 0,
    requests: prepared.probes,
  };
  // Splits add new due windows, so keep taking due windows until none is left.
  for (let round = 0; round < MAX_ROUNDS; round++) {
    // A running window is due once its lease has expired (its holder died): resumed from its checkpoint.
    const due = await windowsToPage(deps.db, { ignoreBackoff: round === 0 });
    const mine = due.filter((row) => row.status !== 'failed' || round === 0);
    if (mine.length === 0) break;
    if (!(await pageRound(deps, mine, tally))) break;
  }
  const watermark = await updateWatermark(deps);
  const unfinished = await windowsInRange(deps.db, {}, ['failed']);
  const problems = unfinished.map(
    (row) => `window ${describeWindow(windowOf(row))} failed: ${row.last_error ?? 'no reason recorded'}`,
  );
  return {
    status: problems.length > 0 ? 'partial' : 'succeeded',
    rows: tally.rows,
    requests: tally.requests,
    details: {
      planned: prepared.planned,
      ...tally.outcomes,
      lookbackProbes: prepared.probes,
      lookbackRepaged: prepared.repaged,
      watermark,
    },
    ...(problems.length > 0
      ? { error: `${problems.length} window(s) failed and will be retried`, problems }
      : {}),
  };
}

/**
 * Pages one round of due windows, CHECKINS_TUNING.windowsInFlight at a time as a worker runs its window
 * jobs: one parses while the other waits. After an error that stops the pass, no further window
 * starts; the one in flight finishes, then the error is thrown. Returns whether a window completed
 * or split (another round may find more).
 */
export async function pageRound(
  deps: CheckinsDeps,
  rows: readonly SyncWindow[],
  tally: PagingTally,
): Promise<boolean> {
  let progressed = false;
  let stopped: Error | undefined;
  await pMap(
    rows,
    async (row) => {
      if (stopped !== undefined) return;
      let outcome: WindowOutcome;
      try {
        outcome = await pageWindow(deps, windowOf(row));
      } catch (error) {
        if (!stopsThePass(error)) throw error;
        stopped ??= error;
        return;
      }
      tally.requests += outcome.requests;
      tally.outcomes[outcome.status]++;
      if (outcome.status === 'complete') tally.rows += outcome.rows;
      if (outcome.status === 'complete' || outcome.status === 'split') progressed = true;
    },
    { concurrency: CHECKINS_TUNING.windowsInFlight },
  );
  if (stopped !== undefined) throw stopped;
  return progressed;
}
