import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFeedCheckIn, type CheckIn } from '../../../src/records/index.js';
import { checkInInsert, upsertCheckInPage } from '../../../src/warehouse/check-ins.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { feedCheckIn } from '../../unit/records/fixtures.js';

// A page statement sends each (location, restaurant) pair once and each row its pair's place
// (venuesOf): every stored row must still hold its own location and restaurant, on the plain
// insert of a first read and on the upsert of a later one, with more venues than a feed page has
// and a location whose restaurant changes mid-page.

const base = (() => {
  const parsed = parseFeedCheckIn(feedCheckIn());
  if (!parsed.ok) throw new Error(parsed.rejection.reason);
  return parsed.record;
})();
const uuid = (prefix: number, i: number) => `${prefix}0000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const SEEN = new Date('2026-11-10T12:34:00Z');
const LATER = new Date('2026-11-10T13:34:00Z');

/** Row i at venue v: location v, restaurant v % 7, except location 0's restaurant changes at row 30. */
function page(venueOf: (i: number) => number): CheckIn[] {
  return Array.from({ length: 60 }, (_, i) => {
    const venue = venueOf(i);
    return {
      ...base,
      id: uuid(3, i),
      locationId: uuid(1, venue),
      restaurantId: uuid(2, venue === 0 && i >= 30 ? 99 : venue % 7),
      createdAtMs: Date.parse('2026-11-01T09:00:00Z') + i * 60_000,
      endedAtMs: null,
    };
  });
}

describe("a page statement stores each row's own location and restaurant", () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase('page_venues');
  });
  afterAll(async () => t.drop());

  const stored = async () =>
    (
      await sql<{ id: string; location_id: string; restaurant_id: string }>`
        select id::text, location_id::text, restaurant_id::text from rewards.check_ins order by id`.execute(
        t.db,
      )
    ).rows;
  const expected = (rows: CheckIn[]) =>
    rows.map((r) => ({ id: r.id, location_id: r.locationId, restaurant_id: r.restaurantId }));

  it('on the first read (plain insert) and on a later read (upsert) that moves every row', async () => {
    const first = page((i) => (i % 3 === 0 ? 0 : i % 50));
    await sql`with ${sql.join(checkInInsert(first, SEEN)!.ctes)} select 1`.execute(t.db);
    expect(await stored()).toEqual(expected(first));

    const second = page((i) => (i % 3 === 0 ? 0 : (i * 7) % 53));
    await upsertCheckInPage(t.db, second, LATER);
    expect(await stored()).toEqual(expected(second));
  });
});
