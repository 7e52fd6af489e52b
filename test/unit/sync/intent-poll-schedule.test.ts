import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_POLL_SCHEDULE as P,
  nextPollAt,
  pollBudgetPerPass,
} from '../../../src/sync/intent-poll-schedule.js';

const now = new Date('2026-11-20T12:00:00Z');
const ago = (ms: number) => new Date(now.getTime() - ms);
const delay = (next: Date | null) => (next === null ? null : next.getTime() - now.getTime());

describe('nextPollAt', () => {
  it('polls young intents at the floor and backs off with age up to the cap', () => {
    expect(
      delay(nextPollAt({ now, createdAt: ago(5_000), expiresAt: null, pollCount: 1, status: 'pending' })),
    ).toBe(P.minIntervalMs);
    expect(
      delay(nextPollAt({ now, createdAt: ago(600_000), expiresAt: null, pollCount: 1, status: 'pending' })),
    ).toBe(30_000);
    expect(
      delay(
        nextPollAt({ now, createdAt: ago(86_400_000), expiresAt: null, pollCount: 1, status: 'pending' }),
      ),
    ).toBe(P.maxIntervalMs);
  });

  it('stops at a terminal status', () => {
    for (const status of ['paid', 'canceled', 'refunded']) {
      expect(nextPollAt({ now, createdAt: ago(1_000), expiresAt: null, pollCount: 1, status })).toBeNull();
    }
  });

  it('looks right after expires_at, then stops after the grace period', () => {
    const expiresAt = new Date(now.getTime() + 10_000);
    const old = ago(3_600_000); // interval would be 3 minutes
    expect(nextPollAt({ now, createdAt: old, expiresAt, pollCount: 5, status: 'pending' })).toEqual(
      new Date(expiresAt.getTime() + P.minIntervalMs),
    );
    const expired = new Date(now.getTime() - P.expiryGraceMs);
    expect(
      nextPollAt({ now, createdAt: old, expiresAt: expired, pollCount: 5, status: 'pending' }),
    ).toBeNull();
  });

  it('stops an intent without expiry after maxWatchMs', () => {
    expect(
      nextPollAt({ now, createdAt: ago(P.maxWatchMs), expiresAt: null, pollCount: 1, status: 'pending' }),
    ).toBeNull();
  });

  it('backs off by poll count when created_at is missing or in the future', () => {
    const first = delay(
      nextPollAt({ now, createdAt: undefined, expiresAt: null, pollCount: 1, status: 'pending' }),
    );
    const later = delay(
      nextPollAt({
        now,
        createdAt: new Date(now.getTime() + 3_600_000),
        expiresAt: null,
        pollCount: 2_000,
        status: 'pending',
      }),
    );
    expect(first).toBe(P.minIntervalMs);
    expect(later).toBeGreaterThan(P.minIntervalMs);
  });

  it('never schedules in the past, inside the bounds, never past the give-up moment', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1_000_000, max: 40 * 86_400_000 }),
        fc.option(fc.integer({ min: -86_400_000, max: 86_400_000 }), { nil: null }),
        fc.nat(10_000),
        (ageMs, expiresIn, pollCount) => {
          const expiresAt = expiresIn === null ? null : new Date(now.getTime() + expiresIn);
          const next = nextPollAt({ now, createdAt: ago(ageMs), expiresAt, pollCount, status: 'pending' });
          if (next === null) return;
          const d = next.getTime() - now.getTime();
          expect(d).toBeGreaterThan(0);
          expect(d).toBeLessThanOrEqual(P.maxIntervalMs + P.minIntervalMs);
          if (expiresAt !== null)
            expect(next.getTime()).toBeLessThanOrEqual(expiresAt.getTime() + P.expiryGraceMs);
        },
      ),
    );
  });
});

describe('pollBudgetPerPass', () => {
  it('is pollShare of the rate limit over one pass interval', () => {
    expect(pollBudgetPerPass({ rateLimitRps: 10, pollShare: 0.5, passIntervalMs: 5_000 })).toBe(25);
    expect(pollBudgetPerPass({ rateLimitRps: 1, pollShare: 0.01, passIntervalMs: 1_000 })).toBe(1);
  });

  it('is the allowance of the one budget when the caller has it (at least 1)', () => {
    const base = { rateLimitRps: 10, pollShare: 0.5, passIntervalMs: 5_000 };
    expect(pollBudgetPerPass({ ...base, allowance: 42.7 })).toBe(42);
    expect(pollBudgetPerPass({ ...base, allowance: 0 })).toBe(1);
    expect(pollBudgetPerPass({ ...base, allowance: undefined })).toBe(25);
  });
});
