import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkPagingComplete,
  isSuspiciouslyShort,
  planSnapshotChanges,
  seenCountOfRun,
  shortCountOfRun,
  type PreviousRecord,
} from '../../../src/sync/snapshot-diff.js';

const prev = (entries: [string, string | null, boolean?][]) =>
  new Map<string, PreviousRecord>(
    entries.map(([id, hash, deleted]) => [id, { hash, deleted: deleted ?? false }]),
  );
const facts = { complete: true, lastCompleteCount: null, maxDrop: 0.2 };

describe('planSnapshotChanges', () => {
  it('sorts seen ids into new, changed, unchanged, restored and rejected-only', () => {
    const plan = planSnapshotChanges(
      prev([
        ['same', 'h1'],
        ['edited', 'h1'],
        ['back', null, true],
        ['short-form-only', null],
        ['gone', 'h1'],
      ]),
      new Map([
        ['same', 'h1'],
        ['edited', 'h2'],
        ['back', 'h1'],
        ['short-form-only', 'h1'],
        ['fresh', 'h1'],
        ['malformed', null],
      ]),
      facts,
    );
    expect(plan.inserts.sort()).toEqual(['fresh', 'short-form-only']);
    expect(plan.changed.sort()).toEqual(['back', 'edited']);
    expect(plan.unchanged).toEqual(['same']);
    expect(plan.restored).toEqual(['back']);
    expect(plan.rejectedOnly).toEqual(['malformed']);
    expect(plan.deletions).toEqual({ kind: 'marked', ids: ['gone'] });
  });

  it('a record seen only as a rejection is never a deletion', () => {
    const plan = planSnapshotChanges(prev([['x', 'h1']]), new Map([['x', null]]), facts);
    expect(plan.deletions).toEqual({ kind: 'marked', ids: [] });
  });

  it('an already deleted record is not marked again', () => {
    const plan = planSnapshotChanges(prev([['x', null, true]]), new Map(), facts);
    expect(plan.deletions).toEqual({ kind: 'marked', ids: [] });
  });

  it('an incomplete pass marks no deletions and says why', () => {
    const plan = planSnapshotChanges(prev([['x', 'h']]), new Map(), {
      ...facts,
      complete: false,
      incompleteReason: '503 on page 2',
    });
    expect(plan.deletions).toEqual({
      kind: 'suppressed',
      reason: 'pass_incomplete',
      detail: '503 on page 2',
      candidates: 1,
    });
  });

  it.each([
    { seen: 80, baseline: 100, suppressed: false },
    { seen: 79, baseline: 100, suppressed: true },
    { seen: 0, baseline: 1, suppressed: true },
    { seen: 0, baseline: null, suppressed: false },
  ])(
    'short-pass guard: $seen seen vs $baseline -> suppressed $suppressed',
    ({ seen, baseline, suppressed }) => {
      const previous = prev(Array.from({ length: 100 }, (_, i) => [`r${i}`, 'h'] as [string, string]));
      const seenMap = new Map(Array.from({ length: seen }, (_, i) => [`r${i}`, 'h'] as [string, string]));
      const plan = planSnapshotChanges(previous, seenMap, { ...facts, lastCompleteCount: baseline });
      expect(plan.deletions.kind).toBe(suppressed ? 'suppressed' : 'marked');
      if (plan.deletions.kind === 'suppressed') expect(plan.deletions.reason).toBe('short_pass');
    },
  );

  it('a drop seen by two complete passes in a row is accepted the second time', () => {
    const previous = prev(Array.from({ length: 10 }, (_, i) => [`r${i}`, 'h'] as [string, string]));
    const seen = new Map([['r0', 'h']]);
    const first = planSnapshotChanges(previous, seen, { ...facts, lastCompleteCount: 10 });
    expect(first.deletions.kind).toBe('suppressed');
    const second = planSnapshotChanges(previous, seen, {
      ...facts,
      lastCompleteCount: 10,
      previousShortCount: 1,
    });
    expect(second.deletions).toEqual({
      kind: 'marked',
      ids: Array.from({ length: 9 }, (_, i) => `r${i + 1}`),
    });
  });

  const previousArb = fc.dictionary(
    fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'),
    fc.record({ hash: fc.option(fc.constantFrom('h1', 'h2'), { nil: null }), deleted: fc.boolean() }),
  );
  const seenArb = fc.dictionary(
    fc.constantFrom('a', 'b', 'c', 'g', 'h'),
    fc.option(fc.constantFrom('h1', 'h2'), { nil: null }),
  );
  const factsArb = fc.record({
    complete: fc.boolean(),
    lastCompleteCount: fc.option(fc.nat(10), { nil: null }),
    previousShortCount: fc.option(fc.nat(10), { nil: null }),
    maxDrop: fc.double({ min: 0, max: 1, noNaN: true }),
  });

  it('property: seen ids are partitioned; deletions are unseen, live, previous ids only', () => {
    fc.assert(
      fc.property(previousArb, seenArb, factsArb, (previousObj, seenObj, passFacts) => {
        const previous = new Map(Object.entries(previousObj));
        const seen = new Map(Object.entries(seenObj));
        const plan = planSnapshotChanges(previous, seen, passFacts);
        const parts = [...plan.inserts, ...plan.changed, ...plan.unchanged, ...plan.rejectedOnly].sort();
        expect(parts).toEqual([...seen.keys()].sort());
        for (const id of plan.unchanged) expect(previous.get(id)?.hash).toBe(seen.get(id));
        if (plan.deletions.kind === 'marked') {
          for (const id of plan.deletions.ids) {
            expect(seen.has(id)).toBe(false);
            expect(previous.get(id)?.deleted).toBe(false);
          }
        }
        if (!passFacts.complete) expect(plan.deletions.kind).toBe('suppressed');
        if (
          passFacts.complete &&
          !isSuspiciouslyShort(seen.size, passFacts.lastCompleteCount, passFacts.maxDrop)
        ) {
          const expected = [...previous].filter(([id, r]) => !r.deleted && !seen.has(id)).map(([id]) => id);
          expect(plan.deletions).toEqual({ kind: 'marked', ids: expected });
        }
      }),
    );
  });
});

describe('checkPagingComplete', () => {
  it.each([
    {
      name: 'consistent',
      facts: { totalCounts: [3, 3], itemsReceived: 3, distinctIds: 3, rejectedWithoutId: 0 },
      complete: true,
    },
    {
      name: 'no page',
      facts: { totalCounts: [], itemsReceived: 0, distinctIds: 0, rejectedWithoutId: 0 },
      complete: false,
    },
    {
      name: 'total moved',
      facts: { totalCounts: [3, 4], itemsReceived: 4, distinctIds: 4, rejectedWithoutId: 0 },
      complete: false,
    },
    {
      name: 'a record slipped between pages',
      facts: { totalCounts: [3, 3], itemsReceived: 3, distinctIds: 2, rejectedWithoutId: 0 },
      complete: false,
    },
    {
      name: 'a rejection without id',
      facts: { totalCounts: [3], itemsReceived: 3, distinctIds: 2, rejectedWithoutId: 1 },
      complete: false,
    },
    {
      name: 'empty list',
      facts: { totalCounts: [0], itemsReceived: 0, distinctIds: 0, rejectedWithoutId: 0 },
      complete: true,
    },
  ])('$name', ({ facts: paging, complete }) => {
    expect(checkPagingComplete(paging).complete).toBe(complete);
  });
});

describe('reading earlier passes from sync_runs', () => {
  it('takes details.seen, else rows', () => {
    expect(seenCountOfRun({ rows: 5, details: { seen: 7 } })).toBe(7);
    expect(seenCountOfRun({ rows: 5, details: {} })).toBe(5);
    expect(seenCountOfRun(undefined)).toBeNull();
  });
  it('knows a complete pass that held back deletions as short', () => {
    expect(shortCountOfRun({ rows: 1, details: { seen: 3, deletions: { suppressed: 'short_pass' } } })).toBe(
      3,
    );
    expect(
      shortCountOfRun({ rows: 1, details: { seen: 3, deletions: { suppressed: 'pass_incomplete' } } }),
    ).toBeNull();
    expect(shortCountOfRun({ rows: 1, details: { seen: 3, deletions: { marked: 0 } } })).toBeNull();
  });
});
