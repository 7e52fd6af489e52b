import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { createSimulatorClock } from '../../src/simulator/clock.js';
import { Timeline } from '../../src/simulator/timeline.js';
import { TRUTH_KINDS, TruthLog, type TruthKind } from '../../src/simulator/truth-log.js';

/** A source clock the test moves by hand. */
function manualSource(startMs: number) {
  let now = startMs;
  return { now: () => new Date(now), move: (ms: number) => (now += ms) };
}

describe('simulator clock', () => {
  test('time scale: one source second is `scale` simulated seconds; set and advance act on simulated time', () => {
    const source = manualSource(1_000_000);
    const clock = createSimulatorClock(source, 60);
    expect(clock.nowMs()).toBe(1_000_000);
    source.move(1_000);
    expect(clock.nowMs()).toBe(1_060_000);
    clock.advance(5_000);
    expect(clock.nowMs()).toBe(1_065_000);
    clock.set(new Date(2_000_000));
    source.move(10);
    expect(clock.nowMs()).toBe(2_000_600);
  });

  test('changing the time scale keeps the reading continuous; freezing stops it whatever the scale', () => {
    const source = manualSource(0);
    const clock = createSimulatorClock(source);
    source.move(1_000);
    clock.setTimeScale(1440);
    expect(clock.nowMs()).toBe(1_000);
    source.move(1_000);
    expect(clock.nowMs()).toBe(1_000 + 1_440_000);
    clock.freeze();
    source.move(60_000);
    expect(clock.nowMs()).toBe(1_441_000);
    clock.advance(1);
    clock.unfreeze();
    source.move(1);
    expect(clock.nowMs()).toBe(1_441_001 + 1_440);
    expect(clock.timeScale()).toBe(1440);
  });

  test('a time scale that is not a positive number is refused', () => {
    const clock = createSimulatorClock(manualSource(0));
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => clock.setTimeScale(bad)).toThrow(RangeError);
    expect(() => createSimulatorClock(manualSource(0), 0)).toThrow(/time scale/);
  });
});

describe('timeline', () => {
  test('fires every event in (time, scheduling order), however the run is cut into steps', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 60 }),
        fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 8 }),
        (times, cuts) => {
          const timeline = new Timeline();
          const fired: [number, number][] = [];
          times.forEach((at, order) => timeline.schedule(at, (when) => fired.push([when, order])));
          for (const cut of [...cuts].sort((a, b) => a - b)) timeline.runUntil(cut);
          timeline.runUntil(60);
          const expected = times
            .map((at, order) => [at, order])
            .sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
          expect(fired).toEqual(expected);
          expect(timeline.pending).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('an event scheduled by a firing event inside the range fires in the same run; later ones wait', () => {
    const timeline = new Timeline();
    const fired: number[] = [];
    timeline.schedule(10, (at) => {
      fired.push(at);
      timeline.schedule(at + 5, (later) => fired.push(later));
      timeline.schedule(at + 50, (later) => fired.push(later));
    });
    expect(timeline.runUntil(20)).toBe(2);
    expect(fired).toEqual([10, 15]);
    expect(timeline.nextAt()).toBe(60);
    expect(timeline.appliedUntilMs()).toBe(20);
  });
});

describe('truth log', () => {
  const change = fc.record({
    kind: fc.constantFrom(...TRUTH_KINDS),
    id: fc.constantFrom('a', 'b', 'c'),
    at: fc.integer({ min: 0, max: 40 }),
  });

  test('changesSince(T, U) is every change with T < at <= U in time order, even logged out of order or compacted; a repeat at the same instant is one change', () => {
    fc.assert(
      fc.property(
        fc.array(change, { maxLength: 80 }),
        fc.integer({ min: -1, max: 40 }),
        fc.integer({ min: 0, max: 41 }),
        fc.integer({ min: 16, max: 64 }),
        (changes, since, until, capacity) => {
          const log = new TruthLog(() => null, { capacity });
          const kept: { kind: TruthKind; id: string; at: number; n: number }[] = [];
          const latest = new Map<string, number>();
          changes.forEach((c, n) => {
            log.record(c.kind, c.id, c.at);
            const key = `${c.kind}:${c.id}`;
            if (latest.get(key) === c.at) return; // the same change, logged once
            latest.set(key, Math.max(latest.get(key) ?? -Infinity, c.at));
            if (kept.length === capacity) kept.splice(0, Math.floor(kept.length / 2));
            // Reference: stable insertion by time (an out-of-order change goes after its equals).
            let i = kept.length;
            while (i > 0 && kept[i - 1]!.at > c.at) i--;
            kept.splice(i, 0, { ...c, n });
          });
          const got = [...log.changesSince(since, until)].map((c) => [c.kind, c.id, c.atMs]);
          const want = kept.filter((c) => c.at > since && c.at <= until).map((c) => [c.kind, c.id, c.at]);
          expect(got).toEqual(want);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('lastChangedAt is the latest change, else what the generated data says; history is bounded', () => {
    const log = new TruthLog((kind, id) => (id === 'known' ? 5 : null), { historyPerRecord: 3 });
    expect(log.lastChangedAt('restaurant', 'known')).toBe(5);
    expect(log.lastChangedAt('restaurant', 'unknown')).toBeNull();
    for (const at of [10, 30, 20, 40]) log.record('restaurant', 'known', at);
    expect(log.lastChangedAt('restaurant', 'known')).toBe(40);
    expect(log.changeTimes('restaurant', 'known')).toEqual([20, 30, 40]);
    expect(log.changeTimes('location', 'known')).toEqual([]);
    expect(log.counts(15, 35)).toMatchObject({ restaurant: 2, location: 0 });
  });
});
