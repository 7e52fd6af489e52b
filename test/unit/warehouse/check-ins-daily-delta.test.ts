import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dailyRollupDelta } from '../../../src/warehouse/check-ins-daily-delta.js';

const DAY_MS = 86_400_000;
const VENUES = [
  {
    restaurantId: '20000000-0000-4000-8000-000000000001',
    locationId: '10000000-0000-4000-8000-000000000001',
  },
  {
    restaurantId: '20000000-0000-4000-8000-000000000001',
    locationId: '10000000-0000-4000-8000-000000000002',
  },
  {
    restaurantId: '20000000-0000-4000-8000-000000000002',
    locationId: '10000000-0000-4000-8000-000000000003',
  },
  // The first location under another restaurant (a venue that moved): its own groups.
  {
    restaurantId: '20000000-0000-4000-8000-000000000003',
    locationId: '10000000-0000-4000-8000-000000000001',
  },
];
const T0 = Date.UTC(2026, 9, 30);

const newRow = fc
  .record({
    venue: fc.nat(VENUES.length - 1),
    // Four days, to the millisecond, with the day's edges likely.
    ms: fc.oneof(
      fc.integer({ min: 0, max: 4 * DAY_MS - 1 }),
      fc.constantFrom(0, DAY_MS - 1, DAY_MS, 2 * DAY_MS),
    ),
    ended: fc.boolean(),
    pay: fc.boolean(),
  })
  .map(({ venue, ms, ended, pay }) => ({
    ...VENUES[venue]!,
    createdAtMs: T0 + ms,
    endedAtMs: ended ? T0 + ms + 30 * 60_000 : null,
    svcPayEnabled: pay,
  }));

describe('dailyRollupDelta: a page of new rows as check_ins_daily groups', () => {
  it('groups by UTC day, restaurant and location: counts, svc-pay counts, and which medians change', () => {
    const delta = dailyRollupDelta([
      {
        ...VENUES[0]!,
        createdAtMs: Date.parse('2026-10-31T23:59:59.999Z'),
        endedAtMs: null,
        svcPayEnabled: true,
      },
      {
        ...VENUES[0]!,
        createdAtMs: Date.parse('2026-11-01T00:00:00.000Z'),
        endedAtMs: null,
        svcPayEnabled: false,
      },
      {
        ...VENUES[0]!,
        createdAtMs: Date.parse('2026-11-01T10:00:00Z'),
        endedAtMs: Date.parse('2026-11-01T10:30:00Z'),
        svcPayEnabled: true,
      },
    ]);
    expect(delta).toEqual({
      days: ['2026-10-31', '2026-11-01'],
      restaurantIds: [VENUES[0]!.restaurantId, VENUES[0]!.restaurantId],
      locationIds: [VENUES[0]!.locationId, VENUES[0]!.locationId],
      checkIns: [1, 2],
      svcPayCheckIns: [1, 1],
      medianChanged: [false, true],
    });
    expect(dailyRollupDelta([]).days).toEqual([]);
  });

  it('keeps a location under two restaurants on one day as two groups, in any order of rows', () => {
    const at = Date.parse('2026-11-01T10:00:00Z');
    const row = (venue: number) => ({
      ...VENUES[venue]!,
      createdAtMs: at,
      endedAtMs: null,
      svcPayEnabled: false,
    });
    const delta = dailyRollupDelta([row(0), row(3), row(0), row(3), row(3)]);
    expect(delta.restaurantIds).toEqual([VENUES[0]!.restaurantId, VENUES[3]!.restaurantId]);
    expect(delta.locationIds).toEqual([VENUES[0]!.locationId, VENUES[0]!.locationId]);
    expect(delta.checkIns).toEqual([2, 3]);
  });

  it('equals a row-by-row count of the same groups, and counts every row once', () => {
    fc.assert(
      fc.property(fc.array(newRow, { maxLength: 60 }), (rows) => {
        const delta = dailyRollupDelta(rows);
        const naive = new Map<string, { n: number; pay: number; median: boolean }>();
        for (const row of rows) {
          const key = `${new Date(row.createdAtMs).toISOString().slice(0, 10)} ${row.restaurantId} ${row.locationId}`;
          const group = naive.get(key) ?? { n: 0, pay: 0, median: false };
          group.n += 1;
          group.pay += row.svcPayEnabled ? 1 : 0;
          group.median ||= row.endedAtMs !== null;
          naive.set(key, group);
        }
        const grouped = new Map(
          delta.days.map((day, i) => [
            `${day} ${delta.restaurantIds[i]} ${delta.locationIds[i]}`,
            { n: delta.checkIns[i], pay: delta.svcPayCheckIns[i], median: delta.medianChanged[i] },
          ]),
        );
        expect(grouped).toEqual(naive);
        expect(delta.days).toHaveLength(grouped.size); // no group twice
        expect(delta.checkIns.reduce((a, b) => a + b, 0)).toBe(rows.length);
      }),
    );
  });
});
