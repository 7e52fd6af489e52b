import { setTimeout as sleep } from 'node:timers/promises';
import { plannedState, requestedPlanRange, windowsForGaps } from '../../sync/checkin-plan.js';
import { CHECKINS_PLANNER_LEASE } from '../../leases/lease-names.js';
import { withLease } from '../../leases/with-lease.js';
import {
  insertPlannedWindows,
  knownWindowsOverlapping,
  loadCheckinsState,
  saveCheckinsState,
} from './window-lifecycle.js';
import { leaseOptionsOf } from '../stream.js';
import type { CheckinsDeps } from './deps.js';
import { mergeFragments } from './merge-fragments.js';
import { prepareCheckInStorage } from './storage.js';
import { CHECKINS_TUNING } from './tuning.js';

export interface PlanResult {
  planned: number;
  merged: number;
  from: Date;
  to: Date;
}

/**
 * Plans the windows of [from, to) that no known window covers yet (so a backfill over an
 * already-synced period adds only its gaps) and moves the frontier. Under the planner's lease:
 * two planners racing would otherwise cut the same period into overlapping windows. When
 * another process holds it, plans nothing (that process is planning).
 */
export async function planCheckinWindows(
  deps: Pick<CheckinsDeps, 'db' | 'clock' | 'config' | 'logger' | 'signal'>,
  range: { from?: Date; to?: Date } = {},
): Promise<PlanResult & { busy: boolean }> {
  const result = await withLease(deps.db, CHECKINS_PLANNER_LEASE, leaseOptionsOf(deps), (lease) =>
    planUnderLease({ ...deps, db: lease.db }, range),
  );
  if (!result.acquired) {
    const from = range.from ?? new Date(0);
    return { planned: 0, merged: 0, from, to: range.to ?? from, busy: true };
  }
  return { ...result.value, busy: false };
}

/**
 * planCheckinWindows for a one-shot command (`backfill`, `resync`): while another process holds
 * the planner lease, tries again every `plannerRetryMs`, `plannerTries` times in all
 * (CHECKINS_TUNING; `wait`: until it is free).
 * Still `busy` after that: the caller says so.
 */
export async function planWhenPlannerFree(
  deps: Pick<CheckinsDeps, 'db' | 'clock' | 'config' | 'logger' | 'signal'>,
  range: { from?: Date; to?: Date },
  options: { wait?: boolean } = {},
): Promise<PlanResult & { busy: boolean }> {
  let plan = await planCheckinWindows(deps, range);
  for (let tries = 1; plan.busy && (options.wait === true || tries < CHECKINS_TUNING.plannerTries); tries++) {
    await sleep(CHECKINS_TUNING.plannerRetryMs, undefined, { signal: deps.signal });
    plan = await planCheckinWindows(deps, range);
  }
  return plan;
}

/** planCheckinWindows' work, with `deps.db` fenced by the planner's lease (planAndRecheck's too). */
export async function planUnderLease(
  deps: Pick<CheckinsDeps, 'db' | 'clock' | 'config' | 'logger'>,
  range: { from?: Date; to?: Date },
): Promise<PlanResult> {
  const { db, clock, config } = deps;
  const now = clock.now();
  const state = await loadCheckinsState(db);
  const asked = requestedPlanRange(range, state.frontier, config.checkins, now);
  // Retention first, then the month partitions of what is left to plan (storage.ts).
  const { from, to } = (await prepareCheckInStorage(deps, now, asked)) ?? { from: asked.to, to: asked.to };
  const known = await knownWindowsOverlapping(db, from, to);
  const windows = windowsForGaps(
    { start: from.getTime(), end: to.getTime() },
    known,
    config.checkins,
    now.getTime(),
  );
  const planned = await insertPlannedWindows(db, windows);
  const merged = await mergeFragments(deps, now);
  await saveCheckinsState(db, plannedState(state, { from, to }), now);
  return { planned, merged, from, to };
}
