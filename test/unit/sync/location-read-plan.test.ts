import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  LOCATION_KINDS,
  planLocationReads,
  type KnownLocation,
  type LocationKind,
} from '../../../src/sync/location-read-plan.js';
import type { Cadence, ReadState } from '../../../src/sync/read-cadence.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const now = 1_000 * DAY;
const cadence: Cadence = { floorMs: HOUR / 12, ceilingMs: 7 * DAY };
const cadenceOf = () => cadence;

function state(kind: LocationKind, recordId: string, hoursAgo: number, intervalHours: number): ReadState {
  return {
    kind,
    recordId,
    lastReadAtMs: now - hoursAgo * HOUR,
    lastChangedAtMs: null,
    intervalMs: intervalHours * HOUR,
  };
}
const refreshed = (id: string, hoursAgo = 1): KnownLocation => ({
  id,
  lastRefreshedAtMs: now - hoursAgo * HOUR,
});
const fromFeed = (id: string): KnownLocation => ({ id, lastRefreshedAtMs: null });
const plan = (locations: KnownLocation[], states: ReadState[], requestBudget = 100, everyRecord = false) =>
  planLocationReads({ locations, states, nowMs: now, cadenceOf, requestBudget, everyRecord });

describe('planLocationReads', () => {
  it('reads each kind only when it is due; a location with nothing due is left', () => {
    const states = [
      state('location.full', 'a', 1, 24),
      state('location.open_hours', 'a', 30, 24),
      state('location.full', 'b', 30, 24),
      state('location.open_hours', 'b', 1, 24),
      state('location.full', 'c', 1, 24),
      state('location.open_hours', 'c', 1, 24),
    ];
    const result = plan([refreshed('a'), refreshed('b'), refreshed('c')], states);
    expect(result.reads).toEqual([
      { id: 'a', kinds: ['location.open_hours'] },
      { id: 'b', kinds: ['location.full'] },
    ]);
    expect(result).toMatchObject({ due: 2, skippedForBudget: 0 });
  });

  it('takes the locations the feed brought first, both kinds, whatever a stale read state says', () => {
    const states = [
      state('location.full', 'late', 200, 24),
      state('location.open_hours', 'late', 200, 24),
      state('location.full', 'new', 1, 24),
      state('location.open_hours', 'new', 1, 24),
    ];
    const result = plan([refreshed('late', 200), fromFeed('new')], states, 2);
    expect(result.reads).toEqual([{ id: 'new', kinds: ['location.full', 'location.open_hours'] }]);
    expect(result.skippedForBudget).toBe(1);
  });

  it('counts a location refreshed before it had read states as read then: due a ceiling later', () => {
    const recent = refreshed('recent', 24);
    const old = refreshed('old', 8 * 24);
    expect(plan([recent, old], []).reads).toEqual([
      { id: 'old', kinds: ['location.full', 'location.open_hours'] },
    ]);
  });

  it('past the ceiling first, then the most overdue; one request per kind within the budget', () => {
    const states = [
      state('location.full', 'overdue', 10, 5),
      state('location.open_hours', 'overdue', 1, 24),
      state('location.full', 'past', 7 * 24 + 1, 7 * 24),
      state('location.open_hours', 'past', 7 * 24 + 1, 7 * 24),
      state('location.full', 'just', 6, 5),
      state('location.open_hours', 'just', 1, 24),
    ];
    const locations = [refreshed('overdue'), refreshed('past'), refreshed('just')];
    expect(plan(locations, states).reads.map((r) => r.id)).toEqual(['past', 'overdue', 'just']);
    // 'past' needs two requests, which do not fit: the next ones that fit are taken.
    const tight = plan(locations, states, 1);
    expect(tight.reads).toEqual([{ id: 'overdue', kinds: ['location.full'] }]);
    expect(tight.skippedForBudget).toBe(2);
  });

  it('everyRecord: every location, both kinds, the feed’s first, whatever the cadence and the budget', () => {
    const states = LOCATION_KINDS.map((kind) => state(kind, 'a', 0, 24));
    const result = plan([refreshed('a', 0), fromFeed('z'), refreshed('b', 0)], states, 0, true);
    expect(result.reads.map((r) => r.id)).toEqual(['z', 'a', 'b']);
    expect(result.reads.every((r) => r.kinds.length === 2)).toBe(true);
  });

  it('property: never over budget; every never-refreshed location before any other; past-ceiling kinds due', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.record({
            id: fc.string({ minLength: 1, maxLength: 3 }),
            refreshedAgoMs: fc.option(fc.integer({ min: 0, max: 20 * DAY }), { nil: null }),
            reads: fc.uniqueArray(
              fc.record({
                kind: fc.constantFrom(...LOCATION_KINDS),
                agoMs: fc.integer({ min: 0, max: 20 * DAY }),
                intervalMs: fc.integer({ min: 1, max: 20 * DAY }),
              }),
              { selector: (read) => read.kind, maxLength: 2 },
            ),
          }),
          { selector: (r) => r.id, maxLength: 15 },
        ),
        fc.integer({ min: 0, max: 40 }),
        (records, budget) => {
          const locations = records.map((r) => ({
            id: r.id,
            lastRefreshedAtMs: r.refreshedAgoMs === null ? null : now - r.refreshedAgoMs,
          }));
          const states = records.flatMap((r) =>
            r.reads.map((read) => ({
              kind: read.kind,
              recordId: r.id,
              lastReadAtMs: now - read.agoMs,
              lastChangedAtMs: null,
              intervalMs: read.intervalMs,
            })),
          );
          const limited = plan(locations, states, budget);
          const requests = limited.reads.reduce((sum, r) => sum + r.kinds.length, 0);
          expect(requests).toBeLessThanOrEqual(budget);
          const neverIndex = limited.reads.map((r) =>
            records.find((x) => x.id === r.id)?.refreshedAgoMs === null ? 0 : 1,
          );
          expect(neverIndex).toEqual([...neverIndex].sort());
          const all = plan(locations, states, Number.MAX_SAFE_INTEGER);
          const planned = new Set(all.reads.flatMap((r) => r.kinds.map((kind) => `${kind} ${r.id}`)));
          for (const r of records) {
            for (const kind of LOCATION_KINDS) {
              const read = r.reads.find((x) => x.kind === kind);
              const agoMs = r.refreshedAgoMs === null ? null : (read?.agoMs ?? r.refreshedAgoMs);
              if (agoMs === null || agoMs >= cadence.ceilingMs)
                expect(planned.has(`${kind} ${r.id}`)).toBe(true);
              if (agoMs !== null && agoMs < cadence.floorMs)
                expect(planned.has(`${kind} ${r.id}`)).toBe(false);
            }
          }
        },
      ),
    );
  });
});
