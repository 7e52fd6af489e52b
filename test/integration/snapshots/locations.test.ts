import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLocationsPass, locationRefreshBudget } from '../../../src/streams/locations.js';
import { runRestaurantsPass } from '../../../src/streams/restaurants.js';
import { upsertEmbeddedLocations } from '../../../src/warehouse/locations.js';
import { startHarness, type SnapshotHarness } from './harness.js';

let h: SnapshotHarness;
beforeAll(async () => {
  h = await startHarness('snap_locations', { pageSize: 50 });
});
afterAll(async () => {
  await h?.close();
});

/** What the check-in stream does with each feed page: the full-form locations it embeds. */
async function ingestFeed(): Promise<number> {
  const now = h.sim.control.clock.now();
  let pages = 0;
  for await (const page of h.api.checkInPages({
    createdAfter: new Date(now.getTime() - 5 * 86_400_000),
    createdBefore: new Date(now.getTime() + 60_000),
    pageSize: 100,
  })) {
    const at = h.clock.now();
    await h.database.db.transaction().execute((trx) =>
      upsertEmbeddedLocations(
        trx,
        page.records.map((c) => c.location),
        at,
      ),
    );
    pages++;
  }
  h.clock.advance(60_000);
  return pages;
}

const location = (id: string) =>
  h.database.db.selectFrom('rewards.locations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const versionsOf = (id: string) =>
  h.database.db
    .selectFrom('rewards.locations_history')
    .selectAll()
    .where('id', '=', id)
    .orderBy('valid_from')
    .execute();

describe('locations snapshot', () => {
  let ids: string[];

  it('the feed writes full-form locations, their neighborhoods and short restaurants', async () => {
    expect(await ingestFeed()).toBeGreaterThan(0);
    const rows = await h.database.db.selectFrom('rewards.locations').selectAll().orderBy('id').execute();
    ids = rows.map((r) => r.id);
    expect(rows.length).toBeGreaterThan(5);
    for (const r of rows) {
      expect(r.slug).not.toBeNull();
      expect(r.phone_number).not.toBeNull();
      expect(r.created_at).toBeInstanceOf(Date);
      expect(r.last_refreshed_at).toBeNull();
    }
    const hoods = await h.database.db.selectFrom('rewards.neighborhoods').selectAll().execute();
    expect(new Set(hoods.map((n) => n.id))).toEqual(new Set(rows.map((r) => r.neighborhood_id)));
    const restaurants = await h.database.db.selectFrom('rewards.restaurants').select('id').execute();
    expect(new Set(restaurants.map((r) => r.id))).toEqual(new Set(rows.map((r) => r.restaurant_id)));
    const versions = await h.database.db.selectFrom('rewards.locations_history').select('id').execute();
    expect(versions).toHaveLength(rows.length);
  });

  it('the feed never overwrites a restaurant row from the restaurants list', async () => {
    await h.run('restaurants', runRestaurantsPass);
    const restaurantId = (await location(ids[0]!)).restaurant_id!;
    h.sim.control.restaurants.update(restaurantId, { name: 'Only In The Feed' });
    await ingestFeed();
    const stored = await h.database.db
      .selectFrom('rewards.restaurants')
      .select(['name', 'cuisine'])
      .where('id', '=', restaurantId)
      .executeTakeFirstOrThrow();
    expect(stored.name).not.toBe('Only In The Feed');
  });

  it('a refresh with the reduced form keeps every full-form field and stores open hours', async () => {
    const before = await location(ids[0]!);
    const outcome = await h.run('locations', (deps) => runLocationsPass(deps, { budget: 1000 }));
    expect(outcome.status).toBe('succeeded');
    expect(outcome.details).toMatchObject({
      refreshed: ids.length,
      gone: 0,
      newVersions: 0,
      openHours: ids.length,
    });
    const after = await location(ids[0]!);
    for (const field of [
      'slug',
      'phone_number',
      'reservations_enabled',
      'created_at',
      'updated_at',
    ] as const) {
      expect(after[field]).toEqual(before[field]);
    }
    expect(after.last_refreshed_at).not.toBeNull();
    // the raw record keeps the full form's keys and its embedded restaurant
    expect(after.raw).toMatchObject({ slug: before.slug, restaurant: { cuisine: expect.any(Array) } });
    const hours = await h.database.db
      .selectFrom('rewards.location_open_hours')
      .selectAll()
      .where('location_id', '=', ids[0]!)
      .executeTakeFirstOrThrow();
    expect(hours.hours).toMatchObject({ object: 'open_hours', location: ids[0] });
  });

  it('a change seen in the reduced form opens a version; the fields it lacks stay', async () => {
    const id = ids[1]!;
    const before = await location(id);
    h.sim.control.locations.update(id, { isClub: !before.is_club });
    const outcome = await h.run('locations', (deps) => runLocationsPass(deps, { budget: 1000 }));
    expect(outcome.details).toMatchObject({ newVersions: 1 });
    const after = await location(id);
    expect(after.is_club).toBe(!before.is_club);
    expect(after.phone_number).toBe(before.phone_number);
    const versions = await versionsOf(id);
    expect(versions).toHaveLength(2);
    expect(versions[0]!.valid_to?.getTime()).toBe(versions[1]!.valid_from.getTime());
  });

  it('stalest first, within the budget', async () => {
    const refreshedFirst = (await location(ids[0]!)).last_refreshed_at!;
    await h.database.db
      .updateTable('rewards.locations')
      .set({ last_refreshed_at: null })
      .where('id', '=', ids[2]!)
      .execute();
    const outcome = await h.run('locations', (deps) => runLocationsPass(deps, { budget: 2 }));
    expect(outcome.details).toMatchObject({ planned: 2, refreshed: 2 });
    expect((await location(ids[2]!)).last_refreshed_at).not.toBeNull();
    const refreshedNow = await h.database.db
      .selectFrom('rewards.locations')
      .select('id')
      .where('last_refreshed_at', '>', refreshedFirst)
      .execute();
    expect(refreshedNow.length).toBeGreaterThanOrEqual(2);
  });

  it('a 404 marks the location gone; old check-ins in the feed do not bring it back', async () => {
    const id = ids[3]!;
    h.sim.control.locations.remove(id);
    const outcome = await h.run('locations', (deps) => runLocationsPass(deps, { budget: 1000 }));
    expect(outcome.details).toMatchObject({ gone: 1 });
    expect((await location(id)).deleted_at).not.toBeNull();
    expect((await versionsOf(id)).every((v) => v.valid_to !== null)).toBe(true);
    await ingestFeed();
    expect((await location(id)).deleted_at).not.toBeNull();
    expect((await versionsOf(id)).every((v) => v.valid_to !== null)).toBe(true);
  });

  it('a failing API ends the pass early as failed, writing nothing wrong', async () => {
    h.sim.control.faults.set({ serverErrorRate: 1 });
    try {
      const outcome = await h.run('locations', (deps) => runLocationsPass(deps, { budget: 1000 }));
      expect(outcome.status).toBe('failed');
      expect(outcome.details).toMatchObject({ failed: 3, stoppedEarly: true, gone: 0 });
    } finally {
      h.sim.control.faults.reset();
    }
    const gone = await h.database.db
      .selectFrom('rewards.locations')
      .select('id')
      .where('deleted_at', 'is not', null)
      .execute();
    expect(gone.map((g) => g.id)).toEqual([ids[3]]);
  });

  it('concurrent feed writers of the same new locations leave one row and one current version each', async () => {
    const now = h.sim.control.clock.now();
    const stream = h.api.checkInPages({
      createdAfter: new Date(now.getTime() - 5 * 86_400_000),
      createdBefore: new Date(now.getTime() + 60_000),
      pageSize: 100,
    });
    const page = await stream[Symbol.asyncIterator]().next();
    if (page.done === true) throw new Error('the feed returned no page');
    const locations = page.value.records.map((c) => c.location);
    const fresh = [...new Set(locations.map((l) => l.id))].filter((id) => id !== ids[3]);
    await h.database.db.deleteFrom('rewards.locations_history').where('id', 'in', fresh).execute();
    await h.database.db.deleteFrom('rewards.locations').where('id', 'in', fresh).execute();
    const at = h.clock.now();
    await Promise.all(
      [0, 1, 2, 3].map((k) =>
        h.database.db
          .transaction()
          .execute((trx) =>
            upsertEmbeddedLocations(trx, k % 2 === 0 ? locations : [...locations].reverse(), at),
          ),
      ),
    );
    const current = await h.database.db
      .selectFrom('rewards.locations_history')
      .select(['id', (eb) => eb.fn.countAll<string>().as('n')])
      .where('id', 'in', fresh)
      .where('valid_to', 'is', null)
      .groupBy('id')
      .execute();
    expect(current).toHaveLength(fresh.length);
    expect(current.every((c) => Number(c.n) === 1)).toBe(true);
  });

  it('the budget follows the schedule and the shared rate limit', () => {
    const base = { api: { ...h.config.api, rateLimitRps: 10 }, schedules: { ...h.config.schedules } };
    expect(
      locationRefreshBudget({ ...base, schedules: { ...base.schedules, locationsMs: 86_400_000 } }),
    ).toBe(750);
    expect(locationRefreshBudget({ ...base, schedules: { ...base.schedules, locationsMs: 60_000 } })).toBe(
      75,
    );
    expect(
      locationRefreshBudget({ api: { ...base.api, rateLimitRps: 0.1 }, schedules: base.schedules }),
    ).toBe(7);
  });
});
