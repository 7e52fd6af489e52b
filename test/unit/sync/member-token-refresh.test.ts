import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ACCESS_TOKEN_LIFETIME_MS,
  REFRESH_BEFORE_EXPIRY_MS,
  refreshCost,
  refreshesPerHour,
} from '../../../src/sync/member-token-refresh.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const USABLE = ACCESS_TOKEN_LIFETIME_MS - REFRESH_BEFORE_EXPIRY_MS;

/** Refreshes over `hours` of reads every `everyMs`, as the token manager makes them. */
function simulatedRefreshes(everyMs: number, hours: number): number {
  let usableUntil = -1;
  let refreshes = 0;
  for (let t = 0; t < hours * HOUR; t += everyMs) {
    if (refreshCost(usableUntil < 0 ? null : usableUntil + REFRESH_BEFORE_EXPIRY_MS, t) === 1) {
      refreshes++;
      usableUntil = t + USABLE;
    }
  }
  return refreshes;
}

describe('member token refreshes', () => {
  it('costs a request with no access token, or one within the margin of its expiry', () => {
    const now = 1_000_000;
    expect(refreshCost(null, now)).toBe(1);
    expect(refreshCost(now + REFRESH_BEFORE_EXPIRY_MS, now)).toBe(1);
    expect(refreshCost(now + REFRESH_BEFORE_EXPIRY_MS + 1, now)).toBe(0);
  });

  it('an hourly read needs a refresh every time; reads every 20 minutes one an hour at most', () => {
    expect(refreshesPerHour(HOUR)).toBe(1);
    expect(refreshesPerHour(2 * HOUR)).toBe(0.5);
    expect(refreshesPerHour(20 * MIN)).toBeCloseTo(HOUR / USABLE, 6);
    expect(simulatedRefreshes(HOUR, 24)).toBe(24);
    expect(simulatedRefreshes(20 * MIN, 24)).toBe(24); // a refresh every third read
  });

  it('property: the projection never undercounts, and never falls as reads get more frequent', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: MIN, max: 6 * HOUR }),
        fc.integer({ min: MIN, max: 6 * HOUR }),
        (a, b) => {
          const hours = 48;
          expect(simulatedRefreshes(a, hours)).toBeLessThanOrEqual(
            Math.ceil(refreshesPerHour(a) * hours) + 1,
          );
          if (a < b) expect(refreshesPerHour(a)).toBeGreaterThanOrEqual(refreshesPerHour(b));
        },
      ),
    );
  });
});
