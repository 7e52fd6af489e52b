import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  followListOrder,
  LIST_ORDER_START,
  nextHorizon,
  planIntentSweep,
  sweepReachedStop,
  type SweepPlanInput,
} from '../../../src/sync/intent-sweep-plan.js';

const T = (minutes: number) => new Date(Date.UTC(2026, 10, 1, 12, minutes));
const input = (overrides: Partial<SweepPlanInput> = {}): SweepPlanInput => ({
  due: [],
  pageSize: 500,
  budget: 5,
  fullSweep: false,
  reach: null,
  newestCreatedAt: T(30),
  discoveryLookbackMs: 120_000,
  ...overrides,
});

describe('how far a sweep reads', () => {
  it('a full sweep reads the whole list', () => {
    expect(planIntentSweep(input({ fullSweep: true }))).toEqual({
      stopBelow: null,
      maxPages: Number.POSITIVE_INFINITY,
    });
  });
  it('nothing open: down to the discovery horizon minus the look-back', () => {
    expect(planIntentSweep(input())).toEqual({ stopBelow: T(28), maxPages: 5 });
  });
  it('the first pass (no horizon yet) and nothing open: no stop, the budget bounds it', () => {
    expect(planIntentSweep(input({ newestCreatedAt: null }))).toEqual({ stopBelow: null, maxPages: 5 });
  });
  it('past every open intent when the pages to it fit the budget', () => {
    const plan = planIntentSweep(input({ reach: { oldestCreatedAt: T(1), depth: 1_200 } }));
    expect(plan.stopBelow).toEqual(T(1));
  });
  it('not past every open intent when that would cost more than the budget', () => {
    const plan = planIntentSweep(input({ reach: { oldestCreatedAt: T(1), depth: 5_000 } }));
    expect(plan.stopBelow).toEqual(T(28));
  });
  it('past the due intents the poll planner chose to cover', () => {
    const due = [{ id: 'a', rank: 700, createdAt: T(10) }];
    const plan = planIntentSweep(input({ due, reach: { oldestCreatedAt: T(1), depth: 5_000 } }));
    expect(plan.stopBelow).toEqual(T(10));
  });

  it('never stops above the discovery horizon minus the look-back (nothing new is skipped)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 59 }),
        fc.option(fc.record({ oldest: fc.integer({ min: 0, max: 59 }), depth: fc.nat({ max: 20_000 }) }), {
          nil: null,
        }),
        fc.integer({ min: 1, max: 50 }),
        (newest, reach, budget) => {
          const plan = planIntentSweep(
            input({
              newestCreatedAt: T(newest),
              budget,
              reach: reach === null ? null : { oldestCreatedAt: T(reach.oldest), depth: reach.depth },
            }),
          );
          expect(plan.stopBelow).not.toBeNull();
          expect(plan.stopBelow!.getTime()).toBeLessThanOrEqual(T(newest).getTime() - 120_000);
          expect(plan.maxPages).toBeGreaterThanOrEqual(budget);
        },
      ),
    );
  });
});

describe('following the list order', () => {
  it('tracks the newest record seen and the last one read', () => {
    const order = followListOrder(LIST_ORDER_START, [{ createdAt: T(30) }, {}, { createdAt: T(20) }]);
    expect(order).toEqual({ newestFirst: true, lastCreatedAt: T(20).getTime(), newestSeen: T(30) });
    expect(sweepReachedStop(order, T(25))).toBe(true);
    expect(sweepReachedStop(order, T(20))).toBe(false);
    expect(sweepReachedStop(order, null)).toBe(false);
  });
  it('a list that is not newest first never stops early', () => {
    const page1 = followListOrder(LIST_ORDER_START, [{ createdAt: T(30) }, { createdAt: T(10) }]);
    const page2 = followListOrder(page1, [{ createdAt: T(20) }, { createdAt: T(5) }]);
    expect(page2.newestFirst).toBe(false);
    expect(sweepReachedStop(page2, T(50))).toBe(false);
  });
});

describe('the discovery horizon after a sweep', () => {
  it('stays when the sweep did not reach it', () => {
    expect(nextHorizon({ newestSeen: T(30), reachedHorizon: false, failedFirstSights: [] })).toEqual({});
  });
  it('moves to the newest intent seen', () => {
    expect(nextHorizon({ newestSeen: T(30), reachedHorizon: true, failedFirstSights: [] })).toEqual({
      newestCreatedAt: T(30),
    });
  });
  it('never past a first sight that could not be recorded', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 59 }), { maxLength: 5 }), (failed) => {
        const moved = nextHorizon({
          newestSeen: T(59),
          reachedHorizon: true,
          failedFirstSights: failed.map(T),
        });
        for (const minute of failed)
          expect(moved.newestCreatedAt!.getTime()).toBeLessThan(T(minute).getTime());
        if (failed.length === 0) expect(moved.newestCreatedAt).toEqual(T(59));
      }),
    );
  });
});
