import type { CheckIn } from '../records/index.js';

const DAY_MS = 86_400_000;

/**
 * What a page of new check-ins adds to rewards.check_ins_daily: one entry per (UTC day of
 * created_at, restaurant, location) group, as the column arrays rewards.check_ins_count_page
 * takes (migration 0015). `medianChanged`: the group gains an ended visit, so its stored median
 * is no longer settled. New rows are live (no deletion mark), so every row counts.
 */
export interface DailyRollupDelta {
  days: string[];
  restaurantIds: string[];
  locationIds: string[];
  checkIns: number[];
  svcPayCheckIns: number[];
  medianChanged: boolean[];
}

type NewCheckIn = Pick<
  CheckIn,
  'restaurantId' | 'locationId' | 'createdAtMs' | 'endedAtMs' | 'svcPayEnabled'
>;

/** Groups a page's new rows (each id once) the way the insert trigger of migration 0009 does. */
export function dailyRollupDelta(checkIns: readonly NewCheckIn[]): DailyRollupDelta {
  const delta: DailyRollupDelta = {
    days: [],
    restaurantIds: [],
    locationIds: [],
    checkIns: [],
    svcPayCheckIns: [],
    medianChanged: [],
  };
  // Group index by location, then by day number: no key string built and hashed per row (it was
  // a quarter of the time to build a page's statement). A location's rows name one restaurant;
  // one that names another (a venue moved between restaurants) keys its own group.
  const groupsOf = new Map<string, Map<number, number>>();
  const movedGroupOf = new Map<string, number>();
  for (const checkIn of checkIns) {
    const dayNumber = Math.floor(checkIn.createdAtMs / DAY_MS);
    let days = groupsOf.get(checkIn.locationId);
    if (days === undefined) groupsOf.set(checkIn.locationId, (days = new Map<number, number>()));
    let group = days.get(dayNumber);
    if (group !== undefined && delta.restaurantIds[group] !== checkIn.restaurantId) {
      const movedKey = `${dayNumber} ${checkIn.restaurantId} ${checkIn.locationId}`;
      group = movedGroupOf.get(movedKey);
      if (group === undefined) movedGroupOf.set(movedKey, (group = newGroup(delta, dayNumber, checkIn)));
    } else if (group === undefined) days.set(dayNumber, (group = newGroup(delta, dayNumber, checkIn)));
    delta.checkIns[group]! += 1;
    if (checkIn.svcPayEnabled) delta.svcPayCheckIns[group]! += 1;
    if (checkIn.endedAtMs !== null) delta.medianChanged[group] = true;
  }
  return delta;
}

/** Adds an empty group for the row's day, restaurant and location; returns its index. */
function newGroup(delta: DailyRollupDelta, dayNumber: number, checkIn: NewCheckIn): number {
  // Once per group, not per row: a page has a few dozen.
  delta.days.push(new Date(dayNumber * DAY_MS).toISOString().slice(0, 10));
  delta.restaurantIds.push(checkIn.restaurantId);
  delta.locationIds.push(checkIn.locationId);
  delta.checkIns.push(0);
  delta.svcPayCheckIns.push(0);
  delta.medianChanged.push(false);
  return delta.days.length - 1;
}
