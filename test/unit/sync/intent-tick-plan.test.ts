import fc from 'fast-check';
import { INTENT_PASS_TUNING } from '../../../src/streams/payment-intents/tuning.js';
import { describe, expect, it } from 'vitest';
import {
  dueLookupLimit,
  earnFullFormCredit,
  fullFormReserve,
  maxRoundRows,
  fullSweepDue,
  intentPassStatus,
  lateStartCatchUp,
  nextTickStartMs,
  slotRemainderCap,
  tickBudget,
  tickIntervalMs,
  type TickPacing,
} from '../../../src/sync/intent-tick-plan.js';

// Defaults: 10 rps, INTENT_POLL_SHARE 0.5, PAYMENT_INTENTS_EVERY 5 s, a tick every second.
const pacing = (overrides: Partial<TickPacing> = {}): TickPacing => ({
  slotMs: 5_000,
  tickEveryMs: 1_000,
  passEveryMs: 5_000,
  rateLimitRps: 10,
  pollShare: 0.5,
  minRoundTickGapMs: INTENT_PASS_TUNING.minRoundTickGapMs,
  ...overrides,
});

describe("a tick's budget", () => {
  it('a single tick (run, or no slot) plans for the whole pass interval', () => {
    expect(tickIntervalMs(pacing({ slotMs: 0 }))).toBe(5_000);
    expect(tickBudget(pacing({ slotMs: 0 }))).toBe(25);
  });
  it('repeated ticks (the worker gives a slot) plan for one tick interval', () => {
    expect(tickIntervalMs(pacing())).toBe(1_000);
    expect(tickBudget(pacing())).toBe(5);
  });
  it('is at least one request, however small the share', () => {
    expect(tickBudget(pacing({ pollShare: 0.01, rateLimitRps: 1 }))).toBe(1);
  });
});

describe('when the next tick starts', () => {
  it('after tickEveryMs when the tick spent no more than its share', () => {
    expect(nextTickStartMs(pacing(), { passStartedMs: 0, tickStartedMs: 0, requests: 5 })).toBe(1_000);
  });
  it('later when the tick spent more (a deep sweep): 20 requests at 5 per second wait 4 s', () => {
    expect(
      nextTickStartMs(pacing({ slotMs: 10_000 }), { passStartedMs: 0, tickStartedMs: 0, requests: 20 }),
    ).toBe(4_000);
  });
  it('with an allowance above the share (the one budget), paced by the allowance: 20 requests at 10 per second wait 2 s', () => {
    expect(
      nextTickStartMs(pacing({ slotMs: 10_000 }), {
        passStartedMs: 0,
        tickStartedMs: 0,
        requests: 20,
        budget: 10,
      }),
    ).toBe(2_000);
  });
  it('never slower than the share, whatever the allowance', () => {
    expect(
      nextTickStartMs(pacing({ slotMs: 10_000 }), {
        passStartedMs: 0,
        tickStartedMs: 0,
        requests: 20,
        budget: 1,
      }),
    ).toBe(4_000);
  });
  it('never: the next tick would start at or past the end of the slot', () => {
    expect(nextTickStartMs(pacing(), { passStartedMs: 0, tickStartedMs: 4_000, requests: 1 })).toBeNull();
    expect(nextTickStartMs(pacing(), { passStartedMs: 0, tickStartedMs: 0, requests: 25 })).toBeNull();
  });

  it('keeps the requests of a pass within the poll share, whatever each tick spent', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 200 }), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 100 }),
        fc.constantFrom(0.1, 0.25, 0.5, 1),
        (spent, rateLimitRps, pollShare) => {
          const plan = pacing({ slotMs: 60_000, rateLimitRps, pollShare });
          let startedMs = 0;
          let requests = 0;
          for (const tickRequests of spent) {
            const next = nextTickStartMs(plan, {
              passStartedMs: 0,
              tickStartedMs: startedMs,
              requests: tickRequests,
            });
            if (next === null) break;
            requests += tickRequests;
            expect(next - startedMs).toBeGreaterThanOrEqual(plan.tickEveryMs - 1e-6);
            // Everything spent before the next tick fits the share of the time up to it.
            expect(requests).toBeLessThanOrEqual(((rateLimitRps * pollShare * next) / 1000) * (1 + 1e-9));
            startedMs = next;
          }
          expect(startedMs).toBeLessThan(plan.slotMs);
        },
      ),
    );
  });
});

describe('the rest of a tick', () => {
  const now = new Date('2026-11-01T12:00:00Z');
  it('reads the whole list the first time, then every fullSweepEveryMs', () => {
    expect(fullSweepDue(null, now, 600_000)).toBe(true);
    expect(fullSweepDue(new Date(now.getTime() - 599_999), now, 600_000)).toBe(false);
    expect(fullSweepDue(new Date(now.getTime() - 600_000), now, 600_000)).toBe(true);
  });
  it('looks up far more due intents than it can poll by id', () => {
    expect(dueLookupLimit(5)).toBe(1_000);
    expect(dueLookupLimit(100)).toBe(5_000);
  });
  it.each([
    [{ requests: 10, errors: 0 }, 'succeeded'],
    [{ requests: 10, errors: 3 }, 'partial'],
    [{ requests: 3, errors: 3 }, 'failed'],
    [{ requests: 0, errors: 1 }, 'failed'],
  ] as const)('a pass with %o %s', (totals, status) => {
    expect(intentPassStatus(totals)).toBe(status);
  });
});

describe('the full-form reserve: by-id reads within a bounded share of the requests', () => {
  it('ticks of 5 requests earn half a read each: one read every other tick, the round gets the rest', () => {
    let credit = 0;
    const reserves: number[] = [];
    for (let i = 0; i < 6; i++) {
      const split = fullFormReserve(credit, { budget: 5, demand: true });
      expect(split.pageBudget + split.reserve).toBe(5);
      reserves.push(split.reserve);
      credit = earnFullFormCredit(split.credit, {
        requests: 5,
        share: INTENT_PASS_TUNING.fullFormShare,
        budget: 5,
      });
    }
    expect(reserves).toEqual([0, 0, 1, 0, 1, 0]);
  });
  it('nothing to read: nothing reserved, at most one read carried', () => {
    let credit = 0;
    for (let i = 0; i < 50; i++) {
      const split = fullFormReserve(credit, { budget: 5, demand: false });
      expect(split).toMatchObject({ reserve: 0, pageBudget: 5 });
      credit = earnFullFormCredit(split.credit, { requests: 5, share: 0.5, budget: 5 });
    }
    expect(credit).toBeLessThanOrEqual(3.5);
    expect(fullFormReserve(credit, { budget: 5, demand: false }).credit).toBe(1);
  });
  it('over any run of ticks: at least one page a tick, reads within the share of the requests (plus one)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ budget: fc.integer({ min: 1, max: 60 }), demand: fc.boolean() }), {
          maxLength: 60,
        }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (ticks, share) => {
          let credit = 1;
          let reads = 0;
          let spent = 0;
          for (const tick of ticks) {
            const split = fullFormReserve(credit, tick);
            expect(split.pageBudget).toBeGreaterThanOrEqual(1);
            expect(split.reserve + split.pageBudget).toBe(tick.budget);
            reads += split.reserve;
            spent += tick.budget;
            credit = earnFullFormCredit(split.credit, { requests: tick.budget, share, budget: tick.budget });
          }
          expect(reads).toBeLessThanOrEqual(share * spent + 1 + 1e-9);
        },
      ),
    );
  });
});

describe('ticks that read a list round follow at the allowance pace', () => {
  it('a round of 2 pages at 5 requests/s: the next tick 0.4 s later, not a whole tick interval', () => {
    const next = nextTickStartMs(pacing(), {
      passStartedMs: 0,
      tickStartedMs: 0,
      requests: 2,
      budget: 5,
      readRound: true,
    });
    expect(next).toBe(400);
  });
  it('never closer than minRoundTickGapMs, and never faster than the allowance', () => {
    expect(
      nextTickStartMs(pacing(), {
        passStartedMs: 0,
        tickStartedMs: 0,
        requests: 0,
        budget: 5,
        readRound: true,
      }),
    ).toBe(INTENT_PASS_TUNING.minRoundTickGapMs);
    expect(
      nextTickStartMs(pacing(), {
        passStartedMs: 0,
        tickStartedMs: 0,
        requests: 10,
        budget: 5,
        readRound: true,
      }),
    ).toBe(2_000);
  });
});

describe('a tick that starts late reads what the allowance paid for meanwhile', () => {
  it('0.4 s late at 5 requests/s: 2 more; on time or first: none; at most one interval', () => {
    const late = (startedMs: number, plannedStartMs: number | null = 1_000) =>
      lateStartCatchUp(pacing(), { plannedStartMs, startedMs, budget: 5 });
    expect(late(1_400)).toBe(2);
    expect(late(1_000)).toBe(0);
    expect(late(900)).toBe(0);
    expect(late(1_400, null)).toBe(0);
    expect(late(9_000)).toBe(5);
  });

  // Requests per ms the pacing keeps to: the tick budget over its interval, at least the share.
  const allowancePerMs = (plan: TickPacing) =>
    Math.max(plan.rateLimitRps * plan.pollShare, tickBudget(plan) / (plan.tickEveryMs / 1000)) / 1000;

  // A pass whose ticks spend budget + catch-up each, and run for arbitrary times.
  const simulate = (durations: readonly number[], plan: TickPacing) => {
    let plannedStartMs: number | null = null;
    let startedMs = 0;
    let spent = 0;
    const ticks: { startedMs: number; nextMs: number; spent: number }[] = [];
    for (const duration of durations) {
      const budget = tickBudget(plan);
      const catchUp = lateStartCatchUp(plan, { plannedStartMs, startedMs, budget });
      const requests = budget + catchUp;
      const nextMs = nextTickStartMs(plan, {
        passStartedMs: 0,
        tickStartedMs: startedMs,
        requests: requests - catchUp, // as pass.ts: the catch-up paid for time already past
        budget,
        readRound: true,
      });
      if (nextMs === null) break;
      ticks.push({ startedMs, nextMs, spent: spent + requests });
      spent += requests;
      plannedStartMs = nextMs;
      startedMs = Math.max(nextMs, startedMs + duration);
    }
    return ticks;
  };

  it('never above the allowance: whatever the ticks took, what was spent before a tick starts is paid for by then', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 5_000 }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 50 }),
        (durations, rateLimitRps) => {
          const plan = pacing({ slotMs: 1_000_000, rateLimitRps });
          const rate = allowancePerMs(plan);
          for (const tick of simulate(durations, plan))
            expect(tick.spent).toBeLessThanOrEqual(rate * tick.nextMs * (1 + 1e-9) + 1e-6);
        },
      ),
    );
  });

  it('at the allowance while no tick runs past twice its planned length: slow ticks do not slow the rounds', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 50 }),
        (fractions, rateLimitRps) => {
          const plan = pacing({ slotMs: 1_000_000, rateLimitRps });
          const rate = allowancePerMs(plan);
          // Up to twice the time the allowance takes to pay for a tick's budget.
          const durations = fractions.map((f) => (f * 2 * tickBudget(plan)) / rate);
          for (const [i, tick] of simulate(durations, plan).entries())
            // With its catch-up, a tick has spent what the time up to its start paid for (up to a
            // request lost to rounding per tick, and a thousandth of one for float error).
            expect(tick.spent).toBeGreaterThanOrEqual(rate * tick.startedMs - (i + 1) - 1e-3);
        },
      ),
    );
  });
});

describe('a pass spends within its slot', () => {
  it('the last tick spends what the time left in the slot pays for (at least one); a pass of one tick is not capped', () => {
    expect(slotRemainderCap(pacing(), { passStartedMs: 0, tickStartedMs: 4_200, budget: 5 })).toBe(4);
    expect(slotRemainderCap(pacing(), { passStartedMs: 0, tickStartedMs: 4_990, budget: 5 })).toBe(1);
    expect(slotRemainderCap(pacing(), { passStartedMs: 0, tickStartedMs: 0, budget: 5 })).toBe(25);
    expect(slotRemainderCap(pacing({ slotMs: 0 }), { passStartedMs: 0, tickStartedMs: 0 })).toBe(
      Number.POSITIVE_INFINITY,
    );
  });
  it('whatever the ticks took and however they caught up, a pass spends no more than its slot pays for (+1)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 3_000 }), { minLength: 1, maxLength: 30 }),
        fc.array(fc.nat({ max: 4 }), { minLength: 30, maxLength: 30 }),
        fc.integer({ min: 1, max: 50 }),
        (durations, short, rateLimitRps) => {
          const plan = pacing({ rateLimitRps });
          const budget = tickBudget(plan);
          const rate = Math.max(rateLimitRps * plan.pollShare, budget / (plan.tickEveryMs / 1000));
          let plannedStartMs: number | null = null;
          let startedMs = 0;
          let spent = 0;
          for (const [i, duration] of durations.entries()) {
            const want = budget + lateStartCatchUp(plan, { plannedStartMs, startedMs, budget });
            const cap = slotRemainderCap(plan, { passStartedMs: 0, tickStartedMs: startedMs, budget });
            // A tick may spend less than it may (a round that ended early).
            const requests = Math.max(1, Math.min(cap, want) - (short[i] ?? 0));
            spent += requests;
            const next = nextTickStartMs(plan, {
              passStartedMs: 0,
              tickStartedMs: startedMs,
              requests,
              budget,
              readRound: true,
            });
            if (next === null) break;
            plannedStartMs = next;
            startedMs = Math.max(next, startedMs + duration);
          }
          expect(spent).toBeLessThanOrEqual((rate * plan.slotMs) / 1000 + 1);
        },
      ),
    );
  });
});

describe('how deep a round reaches', () => {
  it('what the share reads in a minute: 5/s at page 500 covers 150,000 rows, at page 50 15,000', () => {
    const reachSeconds = INTENT_PASS_TUNING.roundReachSeconds;
    expect(maxRoundRows({ shareRps: 5, pageSize: 500, reachSeconds })).toBe(150_000);
    expect(maxRoundRows({ shareRps: 5, pageSize: 50, reachSeconds })).toBe(15_000);
    expect(maxRoundRows({ shareRps: 0, pageSize: 0, reachSeconds })).toBe(1);
  });
});
