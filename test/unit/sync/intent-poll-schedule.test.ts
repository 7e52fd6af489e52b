import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_POLL_SCHEDULE as P,
  nextPollAt,
  planIntentPolling,
  pollBudgetPerPass,
  type DueIntent,
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

describe('planIntentPolling', () => {
  const intent = (id: number, rank: number): DueIntent => ({
    id: `i${id}`,
    rank,
    createdAt: ago(rank * 1_000),
  });

  it('sweeps when the due intents sit on few pages', () => {
    const due = Array.from({ length: 300 }, (_, i) => intent(i, i));
    const plan = planIntentPolling({ due, pageSize: 100, minSweepPages: 1, budget: 25 });
    expect(plan.sweepPages).toBe(3);
    expect(plan.pollIds).toEqual([]);
    expect(plan.coveredIds).toHaveLength(300);
    expect(plan.sweepCoversCreatedAt).toEqual(ago(299_000));
  });

  it('polls by id when a few due intents sit deep in a long list', () => {
    const due = [intent(1, 5), intent(2, 40_000), intent(3, 90_000)];
    const plan = planIntentPolling({ due, pageSize: 100, minSweepPages: 1, budget: 25 });
    expect(plan.sweepPages).toBe(1);
    expect(plan.coveredIds).toEqual(['i1']);
    expect(plan.pollIds).toEqual(['i2', 'i3']);
  });

  it('spends no more than the budget and defers the rest, most overdue first', () => {
    const due = Array.from({ length: 50 }, (_, i) => intent(i, 10_000 * (i + 1)));
    const plan = planIntentPolling({ due, pageSize: 100, minSweepPages: 1, budget: 10 });
    expect(plan.sweepPages + plan.pollIds.length).toBe(10);
    expect(plan.pollIds).toEqual(due.slice(0, 9).map((d) => d.id));
    expect(plan.deferredIds).toHaveLength(41);
  });

  it('never costs more than polling every due intent by id or sweeping them all, and accounts for each', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(5_000), { maxLength: 200 }),
        fc.integer({ min: 1, max: 600 }),
        fc.integer({ min: 1, max: 200 }),
        (ranks, pageSize, budget) => {
          const due = ranks.map((rank, i) => intent(i, rank));
          const plan = planIntentPolling({ due, pageSize, minSweepPages: 1, budget });
          const ids = [...plan.coveredIds, ...plan.pollIds, ...plan.deferredIds].sort();
          expect(ids).toEqual(due.map((d) => d.id).sort());
          expect(plan.sweepPages).toBeGreaterThanOrEqual(1);
          expect(plan.sweepPages + plan.pollIds.length).toBeLessThanOrEqual(Math.max(budget, 1));
          const cost = plan.sweepPages + plan.pollIds.length + plan.deferredIds.length;
          expect(cost).toBeLessThanOrEqual(1 + due.length);
          const fullSweepPages = Math.max(1, Math.floor(Math.max(0, ...ranks) / pageSize) + 1);
          if (fullSweepPages <= budget) expect(cost).toBeLessThanOrEqual(fullSweepPages);
        },
      ),
    );
  });
});
