import { CheckInStore, FLAG_SVC_PAY } from '../check-in-store.js';
import { createPrng } from '../prng.js';
import type { LocationRecord, RestaurantRecord } from '../world.js';
import { plannedVisitMs, utcOffsetMinutes, visitIntensity, type Rhythm } from './rhythm.js';

const MINUTE_MS = 60_000;

export interface GeneratedCheckIns {
  store: CheckInStore;
  ongoing: Set<number>;
}

interface ZoneGroup {
  offsetMinutes: number;
  locations: LocationRecord[];
}

/**
 * Exactly `count` check-ins over the `days` before `anchorMs`, with a daily rhythm in each location's
 * local time. Counts per minute come from a cumulative target (round(count * cumulative weight)), so
 * the total is exact and rows are produced in time order (appends only, no sort of a million rows).
 */
export function generateCheckIns(
  seed: number,
  anchorMs: number,
  days: number,
  count: number,
  locations: LocationRecord[],
  restaurants: RestaurantRecord[],
  rhythm: Rhythm = 'daily',
): GeneratedCheckIns {
  const rng = createPrng(seed, 'check-ins');
  const store = new CheckInStore(
    count + 1024,
    (locationIndex) => locations[locationIndex]?.restaurantIndex ?? 0,
  );
  const ongoing = new Set<number>();
  const groups = new Map<string, ZoneGroup>();
  for (const location of locations) {
    const group = groups.get(location.timeZone) ?? {
      offsetMinutes: utcOffsetMinutes(location.timeZone, anchorMs),
      locations: [],
    };
    group.locations.push(location);
    groups.set(location.timeZone, group);
  }
  const zones = [...groups.values()];
  const startMs = Math.floor((anchorMs - days * 86_400_000) / MINUTE_MS) * MINUTE_MS;
  const minutes = Math.floor((anchorMs - startMs) / MINUTE_MS);
  const weight = (minute: number, zone: ZoneGroup): number => {
    const localMinute = (((startMs / MINUTE_MS + minute + zone.offsetMinutes) % 1440) + 1440) % 1440;
    return visitIntensity(localMinute / 60, rhythm) * zone.locations.length;
  };
  let totalWeight = 0;
  for (let m = 0; m < minutes; m++) for (const zone of zones) totalWeight += weight(m, zone);
  if (totalWeight === 0 || count === 0) return { store, ongoing };

  let cumulative = 0;
  let emitted = 0;
  const batchTimes: number[] = [];
  const batchLocations: LocationRecord[] = [];
  for (let m = 0; m < minutes; m++) {
    batchTimes.length = 0;
    batchLocations.length = 0;
    for (const zone of zones) {
      cumulative += weight(m, zone);
      const target = Math.min(count, Math.round((count * cumulative) / totalWeight));
      for (; emitted < target; emitted++) {
        batchTimes.push(startMs + m * MINUTE_MS + rng.int(60) * 1000);
        batchLocations.push(rng.pick(zone.locations));
      }
    }
    const order = batchTimes.map((_, i) => i).sort((a, b) => (batchTimes[a] ?? 0) - (batchTimes[b] ?? 0));
    for (const i of order) {
      const createdAtMs = batchTimes[i] ?? 0;
      const location = batchLocations[i];
      if (!location) continue;
      const cohort = restaurants[location.restaurantIndex]?.cohort ?? 'fsr';
      const flags = location.paymentsEnabled && rng.chance(0.9) ? FLAG_SVC_PAY : 0;
      const seq = store.add(createdAtMs, null, location.index, flags);
      const endMs = createdAtMs + plannedVisitMs(seq, cohort);
      if (endMs > anchorMs) ongoing.add(seq);
      else store.setEnded(seq, endMs);
    }
  }
  return { store, ongoing };
}
