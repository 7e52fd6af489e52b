import fc from 'fast-check';
import { INTENT_PASS_TUNING } from '../../../src/streams/payment-intents/tuning.js';
import { describe, expect, it } from 'vitest';
import {
  advanceRound,
  followListOrder,
  LIST_ORDER_START,
  nextHorizon,
  planIntentSweep,
  splitListPages,
  sweepReachedStop,
  type ListRound,
  type SweepPlanInput,
} from '../../../src/sync/intent-sweep-plan.js';

const T = (minutes: number) => new Date(Date.UTC(2026, 10, 1, 12, minutes));
const input = (overrides: Partial<SweepPlanInput> = {}): SweepPlanInput => ({
  round: null,
  payee: 'wallet',
  now: T(40),
  fullSweepDue: false,
  pageSize: 500,
  pageBudget: 5,
  reach: null,
  newestCreatedAt: T(30),
  discoveryLookbackMs: 120_000,
  ...overrides,
});
const round = (overrides: Partial<ListRound> = {}): ListRound => ({
  nextPage: 7,
  full: false,
  startedAt: T(39),
  newestSeen: T(38),
  horizonCap: null,
  failed: false,
  payee: 'wallet',
  ...overrides,
});

describe('a list round: how far a tick reads', () => {
  it('a new round starts at page 0; a full one when due, reading to the end', () => {
    const plan = planIntentSweep(input({ fullSweepDue: true }));
    expect(plan.round).toMatchObject({ nextPage: 0, full: true, startedAt: T(40), newestSeen: null });
    expect(plan.stopBelow).toBeNull();
    expect(plan.maxPages).toBe(5);
  });
  it('nothing open: down to the discovery horizon minus the look-back, no prefetch past page 0', () => {
    const plan = planIntentSweep(input());
    expect(plan).toMatchObject({ stopBelow: T(28), maxPages: 5, prefetchThrough: 0 });
  });
  it('past every open intent, however many pages that takes: the round continues next tick', () => {
    const plan = planIntentSweep(input({ reach: { oldestCreatedAt: T(1), depth: 10_000 } }));
    expect(plan.stopBelow).toEqual(T(1));
    expect(plan.maxPages).toBe(5);
    expect(plan.prefetchThrough).toBe(4);
  });
  it('continues the round in progress from its next page (a full round stays full)', () => {
    const plan = planIntentSweep(input({ round: round(), reach: { oldestCreatedAt: T(1), depth: 10_000 } }));
    expect(plan.round.nextPage).toBe(7);
    expect(plan.prefetchThrough).toBe(11);
    expect(planIntentSweep(input({ round: round({ full: true }) })).stopBelow).toBeNull();
  });
  it('prefetches no further than the page the oldest open intent is expected on', () => {
    const plan = planIntentSweep(input({ reach: { oldestCreatedAt: T(1), depth: 1_200 } }));
    expect(plan.prefetchThrough).toBe(2);
  });
  it('a round read with another payee filter starts over', () => {
    const plan = planIntentSweep(input({ round: round({ payee: null }) }));
    expect(plan.round.nextPage).toBe(0);
  });
  it('reads at least one page', () => {
    expect(planIntentSweep(input({ pageBudget: 0 })).maxPages).toBe(1);
  });

  it('never stops above the discovery horizon minus the look-back nor above the oldest open intent', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 59 }),
        fc.option(fc.record({ oldest: fc.integer({ min: 0, max: 59 }), depth: fc.nat({ max: 20_000 }) }), {
          nil: null,
        }),
        fc.integer({ min: 1, max: 50 }),
        (newest, reach, pageBudget) => {
          const plan = planIntentSweep(
            input({
              newestCreatedAt: T(newest),
              pageBudget,
              reach: reach === null ? null : { oldestCreatedAt: T(reach.oldest), depth: reach.depth },
            }),
          );
          expect(plan.stopBelow).not.toBeNull();
          expect(plan.stopBelow!.getTime()).toBeLessThanOrEqual(T(newest).getTime() - 120_000);
          if (reach !== null)
            expect(plan.stopBelow!.getTime()).toBeLessThanOrEqual(T(reach.oldest).getTime());
          expect(plan.maxPages).toBe(pageBudget);
          expect(plan.prefetchThrough).toBeLessThanOrEqual(plan.round.nextPage + pageBudget - 1);
        },
      ),
    );
  });
});

describe('a round across ticks', () => {
  const tick = { nextPage: 12, completed: false, newestSeen: null, failedFirstSights: [], failed: false };
  it('continues from the page after the last one applied', () => {
    expect(advanceRound(round(), tick)).toMatchObject({ nextPage: 12, newestSeen: T(38) });
  });
  it('ends once complete', () => {
    expect(advanceRound(round(), { ...tick, completed: true })).toBeNull();
  });
  it('remembers a failure and caps the horizon below a first sight it could not record', () => {
    const next = advanceRound(round(), { ...tick, failed: true, failedFirstSights: [T(20), T(25)] });
    expect(next?.failed).toBe(true);
    expect(next?.horizonCap).toEqual(new Date(T(20).getTime() - 1));
    expect(advanceRound(next!, tick)?.failed).toBe(true);
  });
  it('every page is read once per round: a round split over ticks of any sizes reads pages 0..n in order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 40 }),
        (pages, budgets) => {
          let current: ListRound | null = null;
          const read: number[] = [];
          for (const pageBudget of budgets) {
            const plan = planIntentSweep(
              input({ round: current, pageBudget, reach: { oldestCreatedAt: T(0), depth: pages * 500 - 1 } }),
            );
            let page = plan.round.nextPage;
            let completed = false;
            while (page < plan.round.nextPage + plan.maxPages && !completed) {
              read.push(page);
              completed = page === pages - 1;
              page++;
            }
            current = advanceRound(plan.round, {
              nextPage: page,
              completed,
              newestSeen: null,
              failedFirstSights: [],
              failed: false,
            });
            if (current === null) break;
          }
          expect(read).toEqual(read.map((_, i) => i));
        },
      ),
    );
  });
});

describe('a round over a list that grows while it is read', () => {
  // A model of the newest-first list: rows with increasing created_at, some open; new rows arrive at
  // the top between ticks (pushing every row down); each tick plans with the reach the warehouse
  // would give (the oldest open intent, the rows above it, the open ones of that moment) and reads
  // its pages as the sweep does, stopping where sweepReachedStop says.
  it('every intent open when a round starts is listed before it ends, in at most ⌈(depth + arrivals) / page⌉ + 1 pages', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 300 }),
        fc.array(fc.record({ budget: fc.integer({ min: 1, max: 6 }), arrivals: fc.nat({ max: 40 }) }), {
          minLength: 1,
          maxLength: 200,
        }),
        (pageSize, openFlags, ticks) => {
          const at = (ms: number) => new Date(Date.UTC(2026, 10, 1) + ms * 1_000);
          // Index 0 is the newest row; created_at in seconds, some of them shared by two rows.
          let rows = openFlags.map((open, i) => ({
            id: `r${i}`,
            createdAt: Math.floor((openFlags.length - i) / 2),
            open,
          }));
          let next = openFlags.length;
          const openIds = new Set(rows.filter((r) => r.open).map((r) => r.id));
          if (openIds.size === 0) return;
          let current: ListRound | null = null;
          const seenInRound = new Set<string>();
          let pagesRead = 0;
          let arrivals = 0;
          let startDepth = 0;
          for (const tick of ticks) {
            const oldest = Math.min(...rows.filter((r) => r.open).map((r) => r.createdAt));
            const reach = {
              oldestCreatedAt: at(oldest),
              depth: rows.filter((r) => r.createdAt >= oldest).length,
              oldestIds: rows.filter((r) => r.open && r.createdAt === oldest).map((r) => r.id),
            };
            if (current === null) startDepth = reach.depth;
            const plan = planIntentSweep(
              input({ round: current, pageBudget: tick.budget, pageSize, reach, newestCreatedAt: null }),
            );
            let order = LIST_ORDER_START;
            const seenThisTick = new Set<string>();
            let page = plan.round.nextPage;
            let completed = false;
            for (; page < plan.round.nextPage + plan.maxPages; page++) {
              const records = rows.slice(page * pageSize, (page + 1) * pageSize);
              pagesRead++;
              for (const r of records) {
                seenThisTick.add(r.id);
                seenInRound.add(r.id);
              }
              order = followListOrder(
                order,
                records.map((r) => ({ createdAt: at(r.createdAt) })),
              );
              const last = (page + 1) * pageSize >= rows.length;
              const oldestSeen = {
                createdAt: reach.oldestCreatedAt,
                ids: reach.oldestIds,
                seen: seenThisTick,
              };
              if (last || sweepReachedStop(order, plan.stopBelow, oldestSeen)) {
                completed = true;
                page++;
                break;
              }
            }
            current = advanceRound(plan.round, {
              nextPage: page,
              completed,
              newestSeen: null,
              failedFirstSights: [],
              failed: false,
            });
            if (current === null) {
              for (const id of openIds) expect(seenInRound.has(id)).toBe(true);
              expect(pagesRead).toBeLessThanOrEqual(Math.ceil((startDepth + arrivals) / pageSize) + 1);
              return;
            }
            // New intents arrive at the top (closed ones: those open at the start are the ones checked).
            const fresh = Array.from({ length: tick.arrivals }, () => ({
              id: `r${next++}`,
              createdAt: (rows[0]?.createdAt ?? 0) + 1,
              open: false,
            }));
            rows = [...fresh.reverse(), ...rows];
            arrivals += tick.arrivals;
          }
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
  it('a page that ends on the oldest open intent ends the round once every open intent of that moment was seen', () => {
    const order = followListOrder(LIST_ORDER_START, [{ createdAt: T(30) }, { createdAt: T(20) }]);
    const oldest = (ids: string[] | null, seen: string[]) => ({ createdAt: T(20), ids, seen: new Set(seen) });
    expect(sweepReachedStop(order, T(20))).toBe(false);
    expect(sweepReachedStop(order, T(20), oldest(['a', 'b'], ['a', 'b', 'c']))).toBe(true);
    // Another open intent of that moment may sit on the next page; too many to know: read on.
    expect(sweepReachedStop(order, T(20), oldest(['a', 'b'], ['a']))).toBe(false);
    expect(sweepReachedStop(order, T(20), oldest(null, ['a']))).toBe(false);
    // The stop is the horizon, not the oldest open intent: the strict rule.
    expect(sweepReachedStop(order, T(20), { ...oldest(['a'], ['a']), createdAt: T(10) })).toBe(false);
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

describe('a full round beside the open round', () => {
  const split = (pageBudget: number, over: Partial<Parameters<typeof splitListPages>[0]> = {}) =>
    splitListPages({
      pageBudget,
      fullRound: true,
      hasHorizon: true,
      ticking: true,
      fullRoundShare: INTENT_PASS_TUNING.fullRoundShare,
      ...over,
    });
  it('no full round: every page to the open round', () => {
    expect(split(10, { fullRound: false })).toEqual({ open: 10, full: 0 });
  });
  it('while the pass ticks: a fifth of the pages to the full round, at least one, never a tick of one page', () => {
    expect(split(10)).toEqual({ open: 8, full: 2 });
    expect(split(3)).toEqual({ open: 2, full: 1 });
    expect(split(1)).toEqual({ open: 1, full: 0 });
  });
  it('before the first horizon, the full round reads alone; a one-tick pass gives it what is left', () => {
    expect(split(10, { hasHorizon: false })).toEqual({ open: 0, full: 10 });
    expect(split(10, { ticking: false })).toEqual({ open: 10, full: 10 });
  });
  it('a ticking split never spends more than the pages, and the open round always reads', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 500 }), (pages) => {
        const { open, full } = split(pages);
        expect(open + full).toBe(pages);
        expect(open).toBeGreaterThanOrEqual(1);
        expect(full).toBeLessThanOrEqual(Math.ceil(pages * INTENT_PASS_TUNING.fullRoundShare));
      }),
    );
  });
});
