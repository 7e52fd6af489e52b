import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gaps } from '../../../src/sync/window-gaps.js';
import type { Window } from '../../../src/sync/windows.js';

const w = (start: number, end: number): Window => ({ start, end });

describe('gaps: the parts of a range no known window covers', () => {
  it.each([
    ['nothing known: the whole range', w(0, 100), [], [w(0, 100)]],
    ['the range covered exactly: none', w(0, 100), [w(0, 100)], []],
    ['a window inside: before and after it', w(0, 100), [w(20, 40)], [w(0, 20), w(40, 100)]],
    ['adjacent windows leave no gap between them', w(0, 100), [w(0, 30), w(30, 60)], [w(60, 100)]],
    ['windows sticking out of the range are cut to it', w(10, 90), [w(0, 20), w(80, 200)], [w(20, 80)]],
    ['overlapping known windows', w(0, 100), [w(10, 50), w(20, 30), w(40, 60)], [w(0, 10), w(60, 100)]],
    ['windows wholly before or after the range', w(50, 60), [w(0, 10), w(70, 80)], [w(50, 60)]],
    ['an empty range: none', w(50, 50), [], []],
  ])('%s', (_name, range, known, expected) => {
    expect(gaps(range, known)).toEqual(expected);
  });

  it('with the known windows, cover every instant of the range exactly once (property)', () => {
    const window = fc
      .tuple(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 1, max: 60 }))
      .map(([start, length]) => w(start, start + length));
    fc.assert(
      fc.property(window, fc.array(window, { maxLength: 8 }), (range, unsorted) => {
        const known = [...unsorted].sort((a, b) => a.start - b.start);
        const found = gaps(range, known);
        // Sorted, non-empty, disjoint, inside the range.
        found.forEach((gap, i) => {
          expect(gap.start).toBeLessThan(gap.end);
          expect(gap.start).toBeGreaterThanOrEqual(range.start);
          expect(gap.end).toBeLessThanOrEqual(range.end);
          if (i > 0) expect(gap.start).toBeGreaterThanOrEqual(found[i - 1]!.end);
        });
        // Windows are half-open on integers: checking each integer instant checks them all.
        const inAny = (windows: readonly Window[], t: number) =>
          windows.some((x) => x.start <= t && t < x.end);
        for (let t = range.start - 1; t <= range.end; t++) {
          const inRange = range.start <= t && t < range.end;
          expect(inAny(found, t)).toBe(inRange && !inAny(known, t));
        }
      }),
    );
  });
});
