import { FLAG_SVC_PAY } from './check-in-store.js';
import { plannedVisitMs } from './data/rhythm.js';
import type { World } from './world.js';

/** Mutations shared by the control surface, live mode and the page-shift fault. */

export function addCheckIn(
  world: World,
  createdAtMs: number,
  locationIndex: number,
  options: { ongoing: boolean; svcPayEnabled?: boolean },
): string {
  const location = world.locations[locationIndex];
  if (!location) throw new Error(`no location at index ${locationIndex}`);
  const svcPay = options.svcPayEnabled ?? location.paymentsEnabled;
  const seq = world.checkIns.add(createdAtMs, null, locationIndex, svcPay ? FLAG_SVC_PAY : 0);
  if (options.ongoing) world.ongoing.add(seq);
  else world.checkIns.setEnded(seq, createdAtMs + plannedVisitMs(seq, cohortOf(world, locationIndex)));
  return world.checkInIds.encode(seq);
}

export function cohortOf(world: World, locationIndex: number): 'qsr' | 'fsr' {
  const location = world.locations[locationIndex];
  return (location && world.restaurants[location.restaurantIndex]?.cohort) ?? 'fsr';
}

/** Ends ongoing visits: all of them at `nowMs`, or (live mode) only those whose planned length passed. */
export function endOngoingVisits(world: World, nowMs: number, onlyElapsed: boolean): number {
  let ended = 0;
  for (const seq of [...world.ongoing]) {
    const row = world.checkIns.get(seq);
    if (!row) continue;
    const plannedEnd = row.createdAtMs + plannedVisitMs(seq, cohortOf(world, row.locationIndex));
    if (onlyElapsed && plannedEnd > nowMs) continue;
    world.checkIns.setEnded(seq, onlyElapsed ? plannedEnd : Math.max(row.createdAtMs, nowMs));
    world.ongoing.delete(seq);
    ended++;
  }
  return ended;
}
