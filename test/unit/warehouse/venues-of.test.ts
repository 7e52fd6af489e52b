import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { venuesOf } from '../../../src/warehouse/check-ins.js';

const L = (i: number) => `10000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const R = (i: number) => `20000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

describe('a page sends each (location, restaurant) pair once, and each row its place', () => {
  it('numbers pairs from 1 in the order first met; a location whose restaurant changed is a new pair', () => {
    const rows = [
      { locationId: L(1), restaurantId: R(1) },
      { locationId: L(2), restaurantId: R(2) },
      { locationId: L(1), restaurantId: R(1) },
      { locationId: L(1), restaurantId: R(3) }, // its restaurant changed mid-page
      { locationId: L(1), restaurantId: R(1) },
    ];
    expect(venuesOf(rows)).toEqual({
      locationIds: [L(1), L(2), L(1)],
      restaurantIds: [R(1), R(2), R(3)],
      venueOfRow: [1, 2, 1, 3, 1],
    });
    expect(venuesOf([])).toEqual({ locationIds: [], restaurantIds: [], venueOfRow: [] });
  });

  it('every row reads back its own pair, and no pair is sent twice', () => {
    const row = fc.record({ locationId: fc.nat(6).map(L), restaurantId: fc.nat(3).map(R) });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 200 }), (rows) => {
        const { locationIds, restaurantIds, venueOfRow } = venuesOf(rows);
        expect(venueOfRow).toHaveLength(rows.length);
        rows.forEach((r, i) => {
          const place = venueOfRow[i]!;
          expect(locationIds[place - 1]).toBe(r.locationId);
          expect(restaurantIds[place - 1]).toBe(r.restaurantId);
        });
        const pairs = locationIds.map((l, i) => `${l}/${restaurantIds[i]}`);
        expect(new Set(pairs).size).toBe(pairs.length);
        expect(pairs.length).toBe(new Set(rows.map((r) => `${r.locationId}/${r.restaurantId}`)).size);
      }),
    );
  });
});
