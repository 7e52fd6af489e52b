import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { confirmedDropBefore, nextDropSuspicion } from '../../../src/sync/drop-guard.js';

const MIN = 60_000;

describe('check-in drop guard', () => {
  it.each([
    ['no suspicion: nothing is deleted, a miss opens one', null, 100 * MIN, null, 3, 100 * MIN],
    [
      'suspicion younger than the delay: nothing deleted, the first suspicion is kept',
      90 * MIN,
      100 * MIN,
      null,
      3,
      90 * MIN,
    ],
    ['suspicion old enough: rows missed by both reads are deleted', 60 * MIN, 100 * MIN, 60 * MIN, 0, null],
    [
      'confirmed, and this read alone missed others: a new suspicion from this read',
      60 * MIN,
      100 * MIN,
      60 * MIN,
      2,
      100 * MIN,
    ],
    ['rows back (nothing missed): the suspicion is cleared', 90 * MIN, 100 * MIN, null, 0, null],
  ])('%s', (_rule, suspectedAt, attemptStart, deleteBefore, stillUnseen, next) => {
    const state = { suspectedAt, attemptStart, confirmAfterMs: 30 * MIN };
    expect(confirmedDropBefore(state)).toBe(deleteBefore);
    expect(nextDropSuspicion(state, stillUnseen)).toBe(next);
  });

  it('never deletes on the first read that misses rows, whatever the timing', () => {
    fc.assert(
      fc.property(fc.nat(), fc.nat(), (attemptStart, confirmAfterMs) => {
        expect(confirmedDropBefore({ suspectedAt: null, attemptStart, confirmAfterMs })).toBeNull();
      }),
    );
  });

  it('deletes only rows last seen before a read that began at least the delay earlier', () => {
    fc.assert(
      fc.property(fc.nat(1e12), fc.nat(1e9), fc.nat(1e9), (suspectedAt, gap, confirmAfterMs) => {
        const before = confirmedDropBefore({ suspectedAt, attemptStart: suspectedAt + gap, confirmAfterMs });
        if (before !== null) {
          expect(before).toBe(suspectedAt);
          expect(gap).toBeGreaterThanOrEqual(confirmAfterMs);
        } else expect(gap).toBeLessThan(confirmAfterMs);
      }),
    );
  });
});
