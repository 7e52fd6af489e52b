import { advanceWatermark } from '../../sync/windows.js';
import { advanceStoredWatermark, loadCheckinsState, windowOf, windowsInRange } from './window-lifecycle.js';
import type { CheckinsDeps } from './deps.js';

/** Moves the low watermark across contiguous complete windows; never backwards. */
export async function updateWatermark(deps: Pick<CheckinsDeps, 'db' | 'clock'>): Promise<Date | null> {
  const { db, clock } = deps;
  const state = await loadCheckinsState(db);
  if (state.watermark === null) return null;
  const ahead = await windowsInRange(db, { from: state.watermark });
  const moved = advanceWatermark(
    state.watermark.getTime(),
    ahead.map((row) => ({ ...windowOf(row), status: row.status })),
  );
  if (moved === state.watermark.getTime()) return state.watermark;
  const watermark = new Date(moved);
  // The watermark alone: the planner may be moving the frontier right now.
  await advanceStoredWatermark(db, watermark, clock.now());
  return watermark;
}
