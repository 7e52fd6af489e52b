import { updateWatermark } from './watermark.js';
import type { CheckinsDeps } from './deps.js';
import { pageRound, type PagingTally } from './pass.js';
import { windowsToPage } from './windows-to-page.js';
import { CHECKINS_TUNING } from './tuning.js';

// `backfill --wait` when no worker is running: the range's windows are paged in the command's own
// process, as `run checkins` pages its due windows, instead of waiting for a worker that never
// comes. Leases make it safe beside workers started meanwhile: each window is paged by one process.

/** Rounds of due windows (splits add new due windows, within the range). */
const MAX_ROUNDS = CHECKINS_TUNING.maxRounds.backfill;

export interface Range {
  from: Date;
  to: Date;
}

const inRange = (range: Range) => (row: { window_start: Date; window_end: Date }) =>
  row.window_start >= range.from && row.window_end <= range.to;

/**
 * Pages every due window of the range in this process until none is left: failed ones once
 * (without waiting out their backoff), split parts as they appear. Stops early when `deps.signal`
 * aborts. Windows that stay failed are left to the workers' retries.
 */
export async function pageRangeHere(deps: CheckinsDeps, range: Range): Promise<PagingTally> {
  const tally: PagingTally = {
    outcomes: { complete: 0, split: 0, failed: 0, skipped: 0, 'lease-lost': 0 },
    rows: 0,
    requests: 0,
  };
  for (let round = 0; round < MAX_ROUNDS && deps.signal?.aborted !== true; round++) {
    const due = (await windowsToPage(deps.db, { ignoreBackoff: round === 0 })).filter(inRange(range));
    const mine = due.filter((row) => row.status !== 'failed' || round === 0);
    if (mine.length === 0) break;
    if (!(await pageRound(deps, mine, tally))) break;
  }
  await updateWatermark(deps);
  return tally;
}
