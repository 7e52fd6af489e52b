import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fullJitterDelayMs, parseRetryAfter } from '../../../src/api/retry-policy.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');

describe('parseRetryAfter', () => {
  it.each([
    ['5', 5000],
    ['0', 0],
    [' 12 ', 12_000],
    [new Date(NOW + 30_000).toUTCString(), 30_000],
    [new Date(NOW - 30_000).toUTCString(), 0],
  ])('%s -> %d ms', (header, ms) => {
    expect(parseRetryAfter(header, NOW)).toBe(ms);
  });

  it.each([null, undefined, '', 'soon', '-3'])('%s is unreadable', (header) => {
    expect(parseRetryAfter(header, NOW)).toBeNull();
  });
});

describe('fullJitterDelayMs', () => {
  it('stays in [0, min(cap, base * 2^retry))', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (retry, base, cap, random) => {
          const delay = fullJitterDelayMs(retry, { baseMs: base, capMs: cap }, random);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThan(Math.max(1, Math.min(cap, base * 2 ** retry)));
        },
      ),
    );
  });

  it('grows its ceiling exponentially until the cap', () => {
    const almostOne = 0.999_999;
    const options = { baseMs: 100, capMs: 1000 };
    expect([0, 1, 2, 3, 4].map((retry) => fullJitterDelayMs(retry, options, almostOne))).toEqual([
      99, 199, 399, 799, 999,
    ]);
  });
});
