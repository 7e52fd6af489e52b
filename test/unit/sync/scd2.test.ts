import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyVersionPlan,
  latestVersionsOf,
  planClosures,
  planVersions,
  type VersionRow,
} from '../../../src/sync/scd2.js';

const T0 = new Date('2026-01-01T00:00:00Z');
const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);

describe('planVersions', () => {
  it.each([
    {
      name: 'a first sighting opens a version',
      current: [],
      incoming: [{ id: 'a', hash: 'h1' }],
      close: [],
      open: [{ id: 'a', validFrom: at(5) }],
    },
    {
      name: 'the same content opens nothing',
      current: [{ id: 'a', hash: 'h1', validFrom: at(0) }],
      incoming: [{ id: 'a', hash: 'h1' }],
      close: [],
      open: [],
    },
    {
      name: 'changed content closes the current version where the new one starts',
      current: [{ id: 'a', hash: 'h1', validFrom: at(0) }],
      incoming: [{ id: 'a', hash: 'h2' }],
      close: [{ id: 'a', validTo: at(5) }],
      open: [{ id: 'a', validFrom: at(5) }],
    },
    {
      name: 'duplicates in a batch: the last one wins',
      current: [{ id: 'a', hash: 'h1', validFrom: at(0) }],
      incoming: [
        { id: 'a', hash: 'h2' },
        { id: 'a', hash: 'h1' },
      ],
      close: [],
      open: [],
    },
    {
      name: 'an observation not after the current start begins 1 ms after it',
      current: [{ id: 'a', hash: 'h1', validFrom: at(10) }],
      incoming: [{ id: 'a', hash: 'h2' }],
      close: [{ id: 'a', validTo: new Date(at(10).getTime() + 1) }],
      open: [{ id: 'a', validFrom: new Date(at(10).getTime() + 1) }],
    },
  ])('$name', ({ current, incoming, close, open }) => {
    const plan = planVersions(
      new Map(current.map((c) => [c.id, { hash: c.hash, validFrom: c.validFrom, validTo: null }])),
      incoming.map((c) => ({ ...c, raw: { hash: c.hash } })),
      at(5),
    );
    expect(plan.close).toEqual(close);
    expect(plan.open.map(({ id, validFrom }) => ({ id, validFrom }))).toEqual(open);
  });

  it('planClosures skips ids without a current version', () => {
    const latest = new Map([
      ['a', { hash: 'h', validFrom: at(0), validTo: null }],
      ['c', { hash: 'h', validFrom: at(0), validTo: at(1) }],
    ]);
    expect(planClosures(latest, ['a', 'b', 'a', 'c'], at(3))).toEqual([{ id: 'a', validTo: at(3) }]);
  });

  it('a record back from deletion starts no earlier than its last version ended', () => {
    const latest = new Map([['a', { hash: 'h1', validFrom: at(0), validTo: at(9) }]]);
    const plan = planVersions(latest, [{ id: 'a', hash: 'h1', raw: null }], at(5));
    expect(plan.close).toEqual([]);
    expect(plan.open.map((o) => o.validFrom)).toEqual([at(9)]);
  });
});

type Event =
  { kind: 'observe'; id: string; hash: string; step: number } | { kind: 'delete'; id: string; step: number };

const eventArb: fc.Arbitrary<Event> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant('observe' as const),
      id: fc.constantFrom('a', 'b', 'c'),
      hash: fc.constantFrom('h1', 'h2', 'h3'),
      // zero and negative steps: same-millisecond observations and a clock stepping back
      step: fc.integer({ min: -2, max: 5 }),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('delete' as const),
      id: fc.constantFrom('a', 'b', 'c'),
      step: fc.integer({ min: -2, max: 5 }),
    }),
    weight: 1,
  },
);

function replay(events: Event[]): {
  rows: VersionRow[];
  expectedVersions: Map<string, number>;
  last: Map<string, string | null>;
} {
  let rows: VersionRow[] = [];
  let clock = T0.getTime();
  const expectedVersions = new Map<string, number>();
  const last = new Map<string, string | null>();
  for (const event of events) {
    clock += event.step * 1000;
    const current = latestVersionsOf(rows);
    if (event.kind === 'delete') {
      rows = applyVersionPlan(rows, { close: planClosures(current, [event.id], new Date(clock)), open: [] });
      last.set(event.id, null);
      continue;
    }
    if (last.get(event.id) !== event.hash)
      expectedVersions.set(event.id, (expectedVersions.get(event.id) ?? 0) + 1);
    last.set(event.id, event.hash);
    rows = applyVersionPlan(
      rows,
      planVersions(current, [{ id: event.id, hash: event.hash, raw: null }], new Date(clock)),
    );
  }
  return { rows, expectedVersions, last };
}

describe('SCD2 invariants (property)', () => {
  it('versions of an id never overlap and are ordered', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 60 }), (events) => {
        const { rows } = replay(events);
        for (const id of new Set(rows.map((r) => r.id))) {
          const versions = rows
            .filter((r) => r.id === id)
            .sort((x, y) => x.validFrom.getTime() - y.validFrom.getTime());
          for (let i = 0; i < versions.length; i++) {
            const v = versions[i]!;
            if (v.validTo !== null) expect(v.validTo.getTime()).toBeGreaterThan(v.validFrom.getTime());
            const next = versions[i + 1];
            if (next !== undefined) {
              expect(v.validTo).not.toBeNull();
              expect(v.validTo!.getTime()).toBeLessThanOrEqual(next.validFrom.getTime());
            }
          }
          // (id, valid_from) is the primary key
          expect(new Set(versions.map((v) => v.validFrom.getTime())).size).toBe(versions.length);
        }
      }),
    );
  });

  it('exactly one current version per live id, none for a deleted one, holding the last content', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 60 }), (events) => {
        const { rows, last } = replay(events);
        for (const [id, hash] of last) {
          const open = rows.filter((r) => r.id === id && r.validTo === null);
          if (hash === null) expect(open).toHaveLength(0);
          else expect(open.map((r) => r.hash)).toEqual([hash]);
        }
      }),
    );
  });

  it('a new version only on a content change (or a return after deletion)', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 60 }), (events) => {
        const { rows, expectedVersions } = replay(events);
        for (const [id, count] of expectedVersions)
          expect(rows.filter((r) => r.id === id)).toHaveLength(count);
      }),
    );
  });
});
