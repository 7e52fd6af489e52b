import { visitIntensity, type Rhythm } from '../data/rhythm.js';
import { hashString, mix32, type Prng } from '../prng.js';
import type { MemberActivityClass } from './change-settings.js';

/** Each rhythm's intensity by minute of the local day. */
const BY_MINUTE: Record<Rhythm, Float64Array> = {
  daily: Float64Array.from({ length: 1440 }, (_, minute) => visitIntensity(minute / 60, 'daily')),
  flat: Float64Array.from({ length: 1440 }, (_, minute) => visitIntensity(minute / 60, 'flat')),
};

/** Mean and peak of the daily rhythm (the flat one has the same mean and a lower peak). */
export const RHYTHM = {
  mean: BY_MINUTE.daily.reduce((sum, value) => sum + value, 0) / 1440,
  max: BY_MINUTE.daily.reduce((max, value) => Math.max(max, value), 0),
};

/** The rhythm's intensity at an instant, in a zone `offsetMinutes` from UTC. */
export function rhythmAt(atMs: number, offsetMinutes: number, rhythm: Rhythm): number {
  const minuteOfDay = (((Math.floor(atMs / 60_000) + offsetMinutes) % 1440) + 1440) % 1440;
  return BY_MINUTE[rhythm][minuteOfDay] ?? 0;
}

/** An exponential wait with the given mean, in whole milliseconds (at least 1); Infinity for mean 0. */
export function exponentialMs(rng: Prng, meanMs: number): number {
  if (!(meanMs > 0)) return Infinity;
  return Math.max(1, Math.round(-Math.log(1 - rng.next()) * meanMs));
}

/**
 * The next arrival after `fromMs` of a Poisson process that follows the daily rhythm: `meanGapMs` is
 * the mean wait over a whole day, shorter at the peaks, longer at night. Drawn by thinning: candidates
 * at the peak rate, each kept with probability intensity / peak. Infinity when meanGapMs is 0.
 */
export function nextRhythmicArrival(
  rng: Prng,
  fromMs: number,
  meanGapMs: number,
  intensityAt: (atMs: number) => number,
  peakIntensity: number = RHYTHM.max,
): number {
  if (!(meanGapMs > 0)) return Infinity;
  const candidateMeanMs = (meanGapMs * RHYTHM.mean) / peakIntensity;
  for (let at = fromMs; ;) {
    at += exponentialMs(rng, candidateMeanMs);
    if (rng.next() * peakIntensity < intensityAt(at)) return at;
  }
}

/** A member's activity class: fixed per seed and member, independent of every other draw. */
export function activityClassOf(
  seed: number,
  memberIndex: number,
  classes: readonly MemberActivityClass[],
): number {
  const u = mix32(hashString('member-activity', seed) ^ memberIndex) / 4294967296;
  let cumulative = 0;
  for (let i = 0; i < classes.length; i++) {
    cumulative += classes[i]?.share ?? 0;
    if (u < cumulative) return i;
  }
  return classes.length - 1;
}

/** How long a member's visit lasts: 25 to 110 minutes, as in the generated history. */
export function memberVisitLengthMs(rng: Prng): number {
  return rng.between(25, 110) * 60_000;
}
