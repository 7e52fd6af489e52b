// What one check-in planner tick plans, as plain data: the range it asks for, the windows that
// fill that range's gaps, and the planner state afterwards. Pure; src/streams/checkins/plan.ts
// reads the known windows and writes the result under the planner's lease.
import { gaps } from './window-gaps.js';
import { planWindowsWithHistory, type Window } from './windows.js';

/** Where the first plan starts when neither CHECKINS_START_AT nor a frontier says: 30 days back. */
export const DEFAULT_START_MS = 30 * 86_400_000;

export interface CheckinPlanSettings {
  startAt: Date | undefined;
  safetyLagMs: number;
  windowMs: number;
  historyWindowMs: number;
  lookbackMs: number;
}

export interface PlannerState {
  watermark: Date | null;
  frontier: Date | null;
}

/**
 * The range a tick asks for: from the range given, else the frontier (the end of the last plan),
 * else CHECKINS_START_AT, else DEFAULT_START_MS back; up to the range's end, else now minus
 * CHECKINS_SAFETY_LAG (rows younger than that may still arrive late).
 */
export function requestedPlanRange(
  range: { from?: Date; to?: Date },
  frontier: Date | null,
  settings: Pick<CheckinPlanSettings, 'startAt' | 'safetyLagMs'>,
  now: Date,
): { from: Date; to: Date } {
  return {
    from: range.from ?? frontier ?? settings.startAt ?? new Date(now.getTime() - DEFAULT_START_MS),
    to: range.to ?? new Date(now.getTime() - settings.safetyLagMs),
  };
}

/**
 * The new windows of `range`: its gaps between the `known` windows (sorted by start), cut on the
 * CHECKINS_WINDOW grid. History older than the look-back is never re-checked, so it is cut on the
 * coarser CHECKINS_HISTORY_WINDOW grid.
 */
export function windowsForGaps(
  range: Window,
  known: readonly Window[],
  settings: Pick<CheckinPlanSettings, 'windowMs' | 'historyWindowMs' | 'lookbackMs'>,
  now: number,
): Window[] {
  const { windowMs, historyWindowMs, lookbackMs } = settings;
  const fineFrom = Math.floor((now - lookbackMs) / windowMs) * windowMs;
  return gaps(range, known).flatMap((gap) =>
    planWindowsWithHistory(gap.start, gap.end, { windowMs, historyWindowMs, fineFrom }),
  );
}

/**
 * The planner state after planning [from, to): the frontier never moves back; the watermark, once
 * set, is left to the watermark's own advance, and the first plan sets it to its start.
 */
export function plannedState(state: PlannerState, planned: { from: Date; to: Date }): PlannerState {
  const { from, to } = planned;
  const frontier = state.frontier === null || to > state.frontier ? to : state.frontier;
  const watermark = state.watermark ?? (from < to ? from : null);
  return { watermark, frontier };
}
