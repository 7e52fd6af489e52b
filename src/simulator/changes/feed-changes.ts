import { plannedVisitMs, utcOffsetMinutes } from '../data/rhythm.js';
import { addCheckIn, cohortOf } from '../world-ops.js';
import type { ChangeContext } from './change-context.js';
import type { Rhythm } from '../data/rhythm.js';
import { nextRhythmicArrival, rhythmAt } from './rhythmic-arrivals.js';

const DAY = 86_400_000;

interface Zone {
  offsetMinutes: number;
  /** Share of all locations. */
  share: number;
  locations: number[];
}

/**
 * The venue feed: check-ins arrive at `perDay` on average, following the lunch and dinner peaks in
 * each location's local time, each ongoing until its planned length has passed (the length live mode
 * uses, so both agree). Visits ongoing when the model starts end the same way.
 */
export function startFeedChanges(ctx: ChangeContext, perDay: number): void {
  const { world, startMs } = ctx;
  const rng = ctx.rng('feed');
  const endAt = (seq: number, plannedEndMs: number): void =>
    ctx.schedule(plannedEndMs, (atMs) => {
      if (!world.ongoing.delete(seq)) return; // ended meanwhile (control checkIns.endOngoing)
      world.checkIns.setEnded(seq, atMs);
      ctx.count('feedEnded');
    });
  for (const seq of world.ongoing) {
    const row = world.checkIns.get(seq);
    if (row)
      endAt(
        seq,
        Math.max(startMs, row.createdAtMs + plannedVisitMs(seq, cohortOf(world, row.locationIndex))),
      );
  }

  const zones = zonesOf(ctx, startMs);
  if (!(perDay > 0) || zones.length === 0) return;
  const intensityAt = (atMs: number): number =>
    zones.reduce((sum, zone) => sum + zone.share * rhythmAt(atMs, zone.offsetMinutes, world.rhythm), 0);
  let peak = 0;
  for (let minute = 0; minute < 1440; minute++) peak = Math.max(peak, intensityAt(minute * 60_000));

  const next = (fromMs: number): void =>
    ctx.schedule(nextRhythmicArrival(rng, fromMs, DAY / perDay, intensityAt, peak), (atMs) => {
      const locationIndex = pickLocation(rng.next(), rng.next(), zones, atMs, world.rhythm);
      const location = world.locations[locationIndex];
      if (location && !location.removed) {
        const seq = world.checkIns.count;
        addCheckIn(world, atMs, locationIndex, { ongoing: true });
        ctx.count('feedArrived');
        endAt(seq, atMs + plannedVisitMs(seq, cohortOf(world, locationIndex)));
      }
      next(atMs);
    });
  next(startMs);
}

function zonesOf(ctx: ChangeContext, atMs: number): Zone[] {
  const byOffset = new Map<number, number[]>();
  const offsetOfZone = new Map<string, number>();
  const live = ctx.world.locations.filter((l) => !l.removed);
  for (const location of live) {
    let offset = offsetOfZone.get(location.timeZone);
    if (offset === undefined) {
      offset = utcOffsetMinutes(location.timeZone, atMs);
      offsetOfZone.set(location.timeZone, offset);
    }
    const list = byOffset.get(offset) ?? [];
    list.push(location.index);
    byOffset.set(offset, list);
  }
  return [...byOffset.entries()].map(([offsetMinutes, locations]) => ({
    offsetMinutes,
    share: locations.length / live.length,
    locations,
  }));
}

/** A zone in proportion to how busy it is at that hour, then a location of it, uniformly. */
function pickLocation(u: number, v: number, zones: Zone[], atMs: number, rhythm: Rhythm): number {
  const weights = zones.map((zone) => zone.share * rhythmAt(atMs, zone.offsetMinutes, rhythm));
  let target = u * weights.reduce((sum, w) => sum + w, 0);
  let zone = zones[zones.length - 1];
  for (let i = 0; i < zones.length; i++) {
    target -= weights[i] ?? 0;
    if (target < 0) {
      zone = zones[i];
      break;
    }
  }
  const locations = zone?.locations ?? [];
  return locations[Math.floor(v * locations.length)] ?? 0;
}
