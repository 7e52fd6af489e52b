import { mergeableCells } from '../../sync/windows.js';
import { mergeCompleteFragments, windowOf, windowsInRange } from './window-lifecycle.js';
import type { CheckinsDeps } from './deps.js';

/**
 * Each planner tick leaves a short tail window (fresh data every CHECKINS_EVERY); once all of a
 * grid cell's fragments are complete they become one window again, so the look-back and verify
 * cost one probe per cell, not one per tick.
 */
export async function mergeFragments(deps: Pick<CheckinsDeps, 'db' | 'config'>, now: Date): Promise<number> {
  const { db, config } = deps;
  const complete = (await windowsInRange(db, {}, ['complete'])).map((row) => ({
    ...windowOf(row),
    apiTotalCount: row.api_total_count ?? 0,
  }));
  const maxRows = config.checkins.splitPages * config.api.pageSize;
  let merged = 0;
  for (const { cell, fragments } of mergeableCells(complete, config.checkins.windowMs, maxRows)) {
    if (await mergeCompleteFragments(db, cell, fragments, now)) merged++;
  }
  return merged;
}
