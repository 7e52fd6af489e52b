import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BUDGET_STREAMS,
  allocateBudget,
  allowanceOf,
  budgetShares,
  type StreamClaim,
} from '../../../src/sync/budget-allocation.js';

const shares = budgetShares({ intentPollShare: 0.5, memberSyncShare: 0.2 });
const claim = (stream: StreamClaim['stream'], demand: number): StreamClaim => ({
  stream,
  share: shares[stream],
  spent: 0,
  demand,
});
const claims = (demands: Partial<Record<StreamClaim['stream'], number>>) =>
  BUDGET_STREAMS.map((stream) => claim(stream, demands[stream] ?? 0));

describe('allocateBudget', () => {
  it('gives members the whole limit while every other stream is idle', () => {
    const allocation = allocateBudget({ limit: 9_000, claims: claims({ members: 60_000 }) });
    expect(allowanceOf(allocation, 'members')).toBe(9_000);
  });

  it('gives a stream with little work its demand, and the rest of the limit on top when nobody wants it', () => {
    const allocation = allocateBudget({ limit: 9_000, claims: claims({ members: 100 }) });
    expect(allowanceOf(allocation, 'members')).toBe(9_000);
  });

  it('serves the feed and the intents first, members keeping their share (the floor)', () => {
    const allocation = allocateBudget({
      limit: 9_000,
      claims: claims({ checkins: 50, payment_intents: 20_000, members: 60_000 }),
    });
    expect(allowanceOf(allocation, 'checkins')).toBe(50);
    expect(allowanceOf(allocation, 'members')).toBe(1_800);
    expect(allowanceOf(allocation, 'payment_intents')).toBe(9_000 - 50 - 1_800);
  });

  it('lends members what the intents leave unused', () => {
    const allocation = allocateBudget({
      limit: 9_000,
      claims: claims({ checkins: 50, payment_intents: 1_000, members: 60_000, challenges: 1_250 }),
    });
    expect(allowanceOf(allocation, 'payment_intents')).toBe(1_000);
    // Members come before the snapshots: everything the feed and intents leave.
    expect(allowanceOf(allocation, 'members')).toBe(9_000 - 50 - 1_000);
    expect(allowanceOf(allocation, 'challenges')).toBe(0);
  });

  it('keeps the locations their quarter while members are busy', () => {
    const allocation = allocateBudget({ limit: 1_000, claims: claims({ members: 5_000, locations: 600 }) });
    expect(allowanceOf(allocation, 'locations')).toBe(250);
    expect(allowanceOf(allocation, 'members')).toBe(750);
  });

  it('takes a stream without a stated demand to want what it spent', () => {
    const allocation = allocateBudget({
      limit: 100,
      claims: [
        { stream: 'checkins', share: 0, spent: 30 },
        { stream: 'members', share: 0.2, spent: 0, demand: 500 },
      ],
    });
    expect(allocation.map((row) => [row.stream, row.demand, row.allowance])).toEqual([
      ['checkins', 30, 30],
      ['members', 500, 70],
    ]);
  });

  it('scales shares that sum above 1 down to fit the limit', () => {
    const allocation = allocateBudget({
      limit: 100,
      claims: [
        { stream: 'payment_intents', share: 0.9, spent: 0, demand: 1_000 },
        { stream: 'members', share: 0.6, spent: 0, demand: 1_000 },
      ],
    });
    expect(allocation.map((row) => row.floor)).toEqual([60, 40]);
    expect(allocation.map((row) => row.allowance)).toEqual([60, 40]);
  });

  it('gives nothing when no stream has work', () => {
    const allocation = allocateBudget({ limit: 100, claims: claims({}) });
    expect(allocation.every((row) => row.allowance === 0)).toBe(true);
  });

  const arbitraryInput = fc.record({
    limit: fc.integer({ min: 0, max: 100_000 }),
    claims: fc
      .tuple(
        fc.shuffledSubarray([...BUDGET_STREAMS], { minLength: 1 }),
        fc.array(
          fc.record({
            share: fc.double({ min: 0, max: 1, noNaN: true }),
            spent: fc.integer({ min: 0, max: 200_000 }),
            demand: fc.option(fc.integer({ min: 0, max: 200_000 }), { nil: undefined }),
          }),
          { minLength: BUDGET_STREAMS.length, maxLength: BUDGET_STREAMS.length },
        ),
      )
      .map(([streams, rest]) =>
        streams.map((stream, i): StreamClaim => {
          const { demand, ...claimed } = rest[i]!;
          return { stream, ...claimed, ...(demand === undefined ? {} : { demand }) };
        }),
      ),
  });

  it('never gives more than the limit in all', () => {
    fc.assert(
      fc.property(arbitraryInput, (input) => {
        const total = allocateBudget(input).reduce((sum, row) => sum + row.allowance, 0);
        expect(total).toBeLessThanOrEqual(input.limit);
      }),
    );
  });

  it('never gives a stream less than min(its floor, its demand) when the shares sum to at most 1', () => {
    fc.assert(
      fc.property(arbitraryInput, (input) => {
        fc.pre(input.claims.reduce((sum, c) => sum + c.share, 0) <= 1);
        for (const row of allocateBudget(input)) {
          expect(row.floor).toBe(Math.floor(row.share * input.limit));
          expect(row.allowance).toBeGreaterThanOrEqual(Math.min(row.floor, row.demand));
        }
      }),
    );
  });

  it('gives a stream with work the whole limit while the others are idle', () => {
    fc.assert(
      fc.property(arbitraryInput, fc.integer({ min: 1, max: 200_000 }), fc.nat(), (input, demand, pick) => {
        const busy = pick % input.claims.length;
        const claimsWithOneBusy = input.claims.map((c, i) => ({
          ...c,
          spent: 0,
          demand: i === busy ? demand : 0,
        }));
        const allocation = allocateBudget({ limit: input.limit, claims: claimsWithOneBusy });
        expect(allocation[busy]!.allowance).toBe(input.limit);
      }),
    );
  });

  it('serves priority first: a stream short of its demand leaves lower ones only their floors', () => {
    fc.assert(
      fc.property(arbitraryInput, (input) => {
        fc.pre(input.claims.reduce((sum, c) => sum + c.share, 0) <= 1);
        const allocation = allocateBudget(input);
        allocation.forEach((row, i) => {
          if (row.allowance >= row.demand) return;
          for (const lower of allocation.slice(i + 1))
            expect(lower.allowance).toBeLessThanOrEqual(Math.min(lower.floor, lower.demand));
        });
      }),
    );
  });

  it('never gives a stream more than the limit, and nothing to a stream without work', () => {
    fc.assert(
      fc.property(arbitraryInput, (input) => {
        for (const row of allocateBudget(input)) {
          expect(row.allowance).toBeLessThanOrEqual(input.limit);
          if (row.demand === 0) expect(row.allowance).toBe(0);
        }
      }),
    );
  });
});
