import { CHECKINS_PLANNER_LEASE } from '../../leases/lease-names.js';
import { withLease } from '../../leases/with-lease.js';
import { leaseOptionsOf } from '../stream.js';
import type { CheckinsDeps } from './deps.js';
import { recheckLookback } from './lookback.js';
import { planUnderLease } from './plan.js';

/**
 * What every check-in tick does before paging: plan new windows, then the look-back. Shared by
 * the worker's `checkins-plan` job (which hands due windows to the window queue) and a
 * foreground `run` (which pages them itself, re-checking the whole look-back).
 */
export async function planAndRecheck(
  deps: CheckinsDeps,
  options: { fullLookback?: boolean } = {},
): Promise<{ planned: number; probes: number; repaged: number }> {
  const result = await withLease(deps.db, CHECKINS_PLANNER_LEASE, leaseOptionsOf(deps), async (lease) => {
    const leased = { ...deps, db: lease.db, signal: lease.signal };
    const plan = await planUnderLease(leased, {});
    const lookback = await recheckLookback(leased, options.fullLookback === true ? { everyMs: 0 } : {});
    return { planned: plan.planned, ...lookback };
  });
  // Another process is planning and re-checking right now.
  return result.acquired ? result.value : { planned: 0, probes: 0, repaged: 0 };
}
