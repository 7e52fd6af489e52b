import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MEMBER_KINDS, planMemberReads, withUnreadKinds } from '../../../src/sync/member-read-plan.js';
import {
  READ_KINDS,
  dueAtMs,
  dueReads,
  firstIntervalSpread,
  initialInterval,
  nextReadInterval,
  type Cadence,
  type ReadKind,
  type ReadState,
} from '../../../src/sync/read-cadence.js';
import { cadencesFrom, parseReadCeilings } from '../../../src/sync/read-ceilings.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const cadence: Cadence = { floorMs: 5 * MIN, ceilingMs: 24 * HOUR };
const cadenceOf = () => cadence;
const now = Date.parse('2026-11-26T12:00:00Z');

const state = (over: Partial<ReadState> & Pick<ReadState, 'recordId'>): ReadState => ({
  kind: 'member.visits',
  lastReadAtMs: now - HOUR,
  lastChangedAtMs: null,
  intervalMs: HOUR,
  ...over,
});

const cadenceArb = fc
  .tuple(fc.integer({ min: 1, max: 10 * 86_400_000 }), fc.integer({ min: 1, max: 10 * 86_400_000 }))
  .map(([a, b]): Cadence => ({ floorMs: Math.min(a, b), ceilingMs: Math.max(a, b) }));

describe('nextReadInterval', () => {
  it('a change halves the interval, a read that found nothing stretches it by half', () => {
    expect(nextReadInterval(4 * HOUR, true, cadence)).toBe(2 * HOUR);
    expect(nextReadInterval(4 * HOUR, false, cadence)).toBe(6 * HOUR);
  });

  it("a record's first read sets its interval to the ceiling, changed or not: it says nothing yet", () => {
    expect(initialInterval(cadence)).toBe(24 * HOUR);
    expect(nextReadInterval(null, true, cadence)).toBe(24 * HOUR);
    expect(nextReadInterval(null, false, cadence)).toBe(24 * HOUR);
  });

  it('spreads first intervals over [ceiling / 2, ceiling], fixed per record, so a crowd connected together does not come due together', () => {
    const spreads = Array.from({ length: 1000 }, (_, i) => firstIntervalSpread(`member.visits m${i}`));
    expect(Math.min(...spreads)).toBeGreaterThanOrEqual(0.5);
    expect(Math.max(...spreads)).toBeLessThanOrEqual(1);
    // Evenly enough: each tenth of the range holds some.
    for (let tenth = 0; tenth < 10; tenth++)
      expect(spreads.filter((s) => Math.floor((s - 0.5) * 20) === tenth).length).toBeGreaterThan(50);
    expect(firstIntervalSpread('member.visits m1')).toBe(spreads[1]);
    expect(nextReadInterval(null, true, cadence, 0.5)).toBe(12 * HOUR);
  });

  it('stays at the floor while the record keeps changing, and at the ceiling while it does not', () => {
    expect(nextReadInterval(5 * MIN, true, cadence)).toBe(5 * MIN);
    expect(nextReadInterval(24 * HOUR, false, cadence)).toBe(24 * HOUR);
  });

  it('property: the interval always stays within [floor, ceiling]', () => {
    fc.assert(
      fc.property(
        cadenceArb,
        fc.option(fc.integer({ min: -1, max: 2 ** 40 })),
        fc.boolean(),
        (c, prev, changed) => {
          const next = nextReadInterval(prev, changed, c);
          expect(next).toBeGreaterThanOrEqual(c.floorMs);
          expect(next).toBeLessThanOrEqual(c.ceilingMs);
        },
      ),
    );
  });

  it('property: a record that changed is re-read sooner than one that did not (strictly, above the floor)', () => {
    fc.assert(
      fc.property(cadenceArb, fc.option(fc.integer({ min: 1, max: 2 ** 40 })), (c, prev) => {
        expect(nextReadInterval(prev, true, c)).toBeLessThanOrEqual(nextReadInterval(prev, false, c));
        if (prev !== null && prev > c.floorMs * 2 && prev <= c.ceilingMs)
          expect(nextReadInterval(prev, true, c)).toBeLessThan(prev);
      }),
    );
  });

  it('property: any sequence of reads keeps the record due no later than its ceiling', () => {
    fc.assert(
      fc.property(cadenceArb, fc.array(fc.boolean(), { maxLength: 60 }), (c, changes) => {
        let interval: number | null = null;
        for (const changed of changes) interval = nextReadInterval(interval, changed, c);
        const due = dueAtMs(
          {
            kind: 'member.tags',
            recordId: 'x',
            lastReadAtMs: now,
            lastChangedAtMs: null,
            intervalMs: interval,
          },
          c,
        );
        expect(due - now).toBeLessThanOrEqual(c.ceilingMs);
      }),
    );
  });
});

describe('dueReads', () => {
  it('leaves out records not due yet', () => {
    expect(dueReads([state({ recordId: 'a', lastReadAtMs: now - 30 * MIN })], now, cadenceOf)).toEqual([]);
  });

  it('a record that would pass its ceiling before the next pass is read now, as at its ceiling', () => {
    // Read 23 h 50 min ago at a 24 h interval: not due yet, but the next pass (15 min) would be late.
    const nearCeiling = state({
      recordId: 'a',
      lastReadAtMs: now - 23 * HOUR - 50 * MIN,
      intervalMs: 24 * HOUR,
    });
    expect(dueReads([nearCeiling], now, cadenceOf)).toEqual([]);
    expect(dueReads([nearCeiling], now, cadenceOf, 15 * MIN)).toEqual([
      expect.objectContaining({ recordId: 'a', pastCeiling: true }),
    ]);
    // Far from it: the look-ahead does not make it due.
    const quiet = state({ recordId: 'b', lastReadAtMs: now - 20 * HOUR, intervalMs: 24 * HOUR });
    expect(dueReads([quiet], now, cadenceOf, 15 * MIN)).toEqual([]);
  });

  it('property: with passes every P, a record read whenever due is never older than its ceiling at a pass', () => {
    fc.assert(
      fc.property(
        cadenceArb,
        fc.integer({ min: 1, max: 6 * HOUR }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 60 }),
        (cad, passEveryMs, changes) => {
          fc.pre(passEveryMs < cad.ceilingMs);
          let record: ReadState = { ...state({ recordId: 'r' }), lastReadAtMs: 0, intervalMs: null };
          let changeIndex = 0;
          for (let at = passEveryMs; at <= 60 * passEveryMs; at += passEveryMs) {
            expect(at - record.lastReadAtMs!).toBeLessThanOrEqual(cad.ceilingMs);
            if (dueReads([record], at, () => cad, passEveryMs).length === 0) continue;
            const changed = changes[changeIndex++ % changes.length]!;
            record = {
              ...record,
              lastReadAtMs: at,
              intervalMs: nextReadInterval(record.intervalMs, changed, cad),
            };
          }
        },
      ),
    );
  });

  it('orders: never read, then past the ceiling, then the latest against their interval, then the recently changed', () => {
    const due = dueReads(
      [
        state({ recordId: 'late-x2', lastReadAtMs: now - 2 * HOUR }),
        state({ recordId: 'just-due-quiet', lastReadAtMs: now - HOUR, lastChangedAtMs: now - 10 * HOUR }),
        state({ recordId: 'just-due-active', lastReadAtMs: now - HOUR, lastChangedAtMs: now - HOUR }),
        state({ recordId: 'past-ceiling', lastReadAtMs: now - 25 * HOUR, intervalMs: 24 * HOUR }),
        state({ recordId: 'never', lastReadAtMs: null, intervalMs: null }),
      ],
      now,
      cadenceOf,
    );
    expect(due.map((d) => d.recordId)).toEqual([
      'never',
      'past-ceiling',
      'late-x2',
      'just-due-active',
      'just-due-quiet',
    ]);
  });

  it('property: every record past its ceiling comes before every record that is not', () => {
    const stateArb = fc.record({
      kind: fc.constantFrom(...READ_KINDS),
      recordId: fc.string({ maxLength: 4 }),
      lastReadAtMs: fc.option(fc.integer({ min: now - 40 * HOUR, max: now })),
      lastChangedAtMs: fc.option(fc.integer({ min: now - 40 * HOUR, max: now })),
      intervalMs: fc.option(fc.integer({ min: 1, max: 40 * HOUR })),
    });
    fc.assert(
      fc.property(fc.array(stateArb, { maxLength: 40 }), (states) => {
        const due = dueReads(states, now, cadenceOf);
        const firstYoung = due.findIndex((d) => !d.pastCeiling);
        if (firstYoung >= 0) expect(due.slice(firstYoung).every((d) => !d.pastCeiling)).toBe(true);
        // Everything read a ceiling or more ago (or never) is due.
        const old = states.filter(
          (s) => s.lastReadAtMs === null || now - s.lastReadAtMs >= cadence.ceilingMs,
        );
        expect(due.filter((d) => d.pastCeiling)).toHaveLength(old.length);
      }),
    );
  });
});

describe('planMemberReads', () => {
  const member = (id: string, reads: Partial<Record<ReadKind, Partial<ReadState>>>): ReadState[] =>
    Object.entries(reads).map(([kind, over]) => state({ recordId: id, kind: kind as ReadKind, ...over }));

  it('reads only the kinds due, grouped by member, the most urgent member first', () => {
    const states = [
      ...member('m1', {
        'member.visits': { lastReadAtMs: now - HOUR },
        'member.wallets': { lastReadAtMs: now - MIN },
      }),
      ...member('m2', {
        'member.visits': { lastReadAtMs: now - 3 * HOUR },
        'member.status': { lastReadAtMs: now - 2 * HOUR },
      }),
    ];
    const plan = planMemberReads({ states, nowMs: now, cadenceOf, budget: 100 });
    expect(plan.reads).toEqual([
      { memberId: 'm2', kinds: ['member.status', 'member.visits'], refreshCost: 0 },
      { memberId: 'm1', kinds: ['member.visits'], refreshCost: 0 },
    ]);
    expect(plan).toMatchObject({ skippedForBudget: 0, dueRecords: 3 });
  });

  it('a new member has every kind due at once', () => {
    const plan = planMemberReads({
      states: withUnreadKinds(['new'], []),
      nowMs: now,
      cadenceOf,
      budget: 100,
    });
    expect(plan.reads).toEqual([{ memberId: 'new', kinds: [...MEMBER_KINDS], refreshCost: 0 }]);
  });

  it('skips a member whose due kinds do not fit, and still takes a cheaper one after it', () => {
    const states = [
      ...withUnreadKinds(['new'], []),
      ...member('old', { 'member.visits': { lastReadAtMs: now - 2 * HOUR } }),
    ];
    const plan = planMemberReads({ states, nowMs: now, cadenceOf, budget: 3 });
    expect(plan.reads).toEqual([{ memberId: 'old', kinds: ['member.visits'], refreshCost: 0 }]);
    expect(plan.skippedForBudget).toBe(1);
  });

  it("counts a member's token refresh in what the member costs", () => {
    const states = [
      ...member('expired', { 'member.visits': { lastReadAtMs: now - 3 * HOUR } }),
      ...member('fresh', { 'member.visits': { lastReadAtMs: now - 2 * HOUR } }),
    ];
    const refreshCostOf = (memberId: string) => (memberId === 'expired' ? 1 : 0);
    // Budget 1: the first member needs 2 (a refresh and a read), so only the second fits.
    const plan = planMemberReads({ states, nowMs: now, cadenceOf, budget: 1, refreshCostOf });
    expect(plan.reads).toEqual([{ memberId: 'fresh', kinds: ['member.visits'], refreshCost: 0 }]);
    expect(plan.skippedForBudget).toBe(1);
    const both = planMemberReads({ states, nowMs: now, cadenceOf, budget: 3, refreshCostOf });
    expect(both.reads.map((read) => [read.memberId, read.refreshCost])).toEqual([
      ['expired', 1],
      ['fresh', 0],
    ]);
  });

  it('property: the plan fits the budget, and when the budget allows, every due record is read', () => {
    const stateArb = fc.record({
      kind: fc.constantFrom(...MEMBER_KINDS),
      recordId: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
      lastReadAtMs: fc.option(fc.integer({ min: now - 40 * HOUR, max: now })),
      lastChangedAtMs: fc.constant(null),
      intervalMs: fc.option(fc.integer({ min: 1, max: 40 * HOUR })),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(stateArb, { selector: (s) => `${s.kind} ${s.recordId}`, maxLength: 30 }),
        fc.integer({ min: 0, max: 40 }),
        fc.subarray(['a', 'b', 'c', 'd', 'e']),
        (states, budget, expired) => {
          const refreshCostOf = (memberId: string) => (expired.includes(memberId) ? 1 : 0);
          const plan = planMemberReads({ states, nowMs: now, cadenceOf, budget, refreshCostOf });
          const reads = plan.reads.reduce((sum, read) => sum + read.kinds.length, 0);
          const cost = reads + plan.reads.reduce((sum, read) => sum + read.refreshCost, 0);
          expect(cost).toBeLessThanOrEqual(budget);
          const dueMembers = new Set(dueReads(states, now, cadenceOf).map((read) => read.recordId));
          const refreshes = [...dueMembers].filter((id) => expired.includes(id)).length;
          if (plan.dueRecords + refreshes <= budget) {
            expect(reads).toBe(plan.dueRecords);
            expect(plan.skippedForBudget).toBe(0);
          }
        },
      ),
    );
  });
});

describe('FRESHNESS_CEILINGS', () => {
  it('overrides the named kinds and keeps the defaults of the others', () => {
    const cadences = cadencesFrom(5 * MIN, parseReadCeilings('member.visits=1h, member.wallets=3d'));
    expect(cadences['member.visits']).toEqual({ floorMs: 5 * MIN, ceilingMs: HOUR });
    expect(cadences['member.wallets'].ceilingMs).toBe(3 * 24 * HOUR);
    expect(cadences['member.status'].ceilingMs).toBe(24 * HOUR);
  });

  it('names what is wrong: an unknown kind, a missing duration, a bad duration', () => {
    expect(() => parseReadCeilings('member.shoes=1h')).toThrow(/unknown kind "member.shoes"/);
    expect(() => parseReadCeilings('member.visits')).toThrow(/kind=duration/);
    expect(() => parseReadCeilings('member.visits=soon')).toThrow(/not a duration/);
  });
});
