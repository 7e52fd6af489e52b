import { windowKey, type Window } from '../sync/windows.js';

// The names of the leases the pipeline takes: one piece of exclusive work each.
// sync-windows.ts builds the window name in SQL too (windowLeaseNameSql): keep the two in step.

/** One pass of a stream at a time, across every worker and `run`. */
export const streamLease = (stream: string): string => `stream:${stream}`;

/** One check-in planner (planning, merging, the look-back) at a time. */
export const CHECKINS_PLANNER_LEASE = 'checkins-planner';

/** One process pages a check-in window at a time. */
export const windowLease = (window: Window): string => `checkins-window:${windowKey(window)}`;
