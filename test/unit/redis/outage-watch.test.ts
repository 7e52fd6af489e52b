import { describe, expect, it } from 'vitest';
import {
  FRESH_OUTAGE_WATCH,
  watchRedisOutage,
  type OutageObservation,
} from '../../../src/redis/outage-watch.js';

const TIMEOUT = 120_000;

/** Feeds observations in order; returns each look's stalled time and verdict. */
function run(observations: OutageObservation[]) {
  let watch = FRESH_OUTAGE_WATCH;
  return observations.map((observation) => {
    const verdict = watchRedisOutage(watch, observation, TIMEOUT);
    watch = verdict.watch;
    return { stalledMs: verdict.stalledMs, stuck: verdict.stuck };
  });
}

const look = (atMs: number, reachable: boolean, progress: number): OutageObservation => ({
  atMs,
  reachable,
  progress,
});

describe('watchRedisOutage: Redis unreachable with no progress for the timeout is stuck', () => {
  it('unreachable and no progress from the first look: stuck once the timeout has passed', () => {
    const looks = run([
      look(0, false, 0),
      look(60_000, false, 0),
      look(119_999, false, 0),
      look(120_000, false, 0),
    ]);
    expect(looks.map((l) => l.stuck)).toEqual([false, false, false, true]);
    expect(looks.at(-1)!.stalledMs).toBe(120_000);
  });

  it('Redis answering again resets the clock: a later outage gets a full timeout', () => {
    const looks = run([
      look(0, false, 0),
      look(100_000, false, 0),
      look(105_000, true, 0),
      look(110_000, false, 0),
      look(229_000, false, 0),
      look(230_000, false, 0),
    ]);
    expect(looks.map((l) => l.stuck)).toEqual([false, false, false, false, false, true]);
  });

  it('progress while Redis looks unreachable (another connection works) resets the clock', () => {
    const looks = run([
      look(0, false, 0),
      look(100_000, false, 3),
      look(219_000, false, 3),
      look(220_000, false, 3),
    ]);
    expect(looks.map((l) => l.stuck)).toEqual([false, false, false, true]);
  });

  it('reachable with no progress is not an outage (the idle watch judges that)', () => {
    const looks = run([look(0, true, 0), look(500_000, true, 0)]);
    expect(looks.every((l) => !l.stuck && l.stalledMs === 0)).toBe(true);
  });
});
