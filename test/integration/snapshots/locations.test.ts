import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/clock.js';
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

/** Every location read, both kinds, whatever the adaptive cadence says: what `resync locations` does. */
const everyLocation = (deps: Parameters<typeof runLocationsPass>[0]) =>
  runLocationsPass(deps, { everyRecord: true });
const HOUR = 3_600_000;

const location = (id: string) =>
  h.database.db.selectFrom('rewards.locations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const versionsOf = (id: string) =>
  h.database.db
    .selectFrom('rewards.locations_history')
    .selectAll()
    .where('id', '=', id)
    .orderBy('valid_from')
    .execute();

const readsOfLocations = async () =>
  new Map(
    (
      await h.database.db
        .selectFrom('rewards.record_reads')
        .select(['kind', 'record_id', 'interval_seconds', 'last_read_at', 'reads'])
        .where('kind', 'like', 'location.%')
        .execute()
    ).map((row) => [`${row.kind} ${row.record_id}`, row]),
  );

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
    const outcome = await h.run('locations', everyLocation);
    expect(outcome.details).toMatchObject({ newVersions: 1 });
    const after = await location(id);
    expect(after.is_club).toBe(!before.is_club);
    expect(after.phone_number).toBe(before.phone_number);
    const versions = await versionsOf(id);
    expect(versions).toHaveLength(2);
    expect(versions[0]!.valid_to?.getTime()).toBe(versions[1]!.valid_from.getTime());
  });

  it('never refreshed first, then the due, within the budget', async () => {
    const refreshedFirst = (await location(ids[0]!)).last_refreshed_at!;
    await h.database.db
      .updateTable('rewards.locations')
      .set({ last_refreshed_at: null })
      .where('id', '=', ids[2]!)
      .execute();
    // Past both kinds' ceiling (7 days): every location is due, the never refreshed one first.
    h.clock.advance(7 * 24 * HOUR + 1_000);
    const outcome = await h.run('locations', (deps) => runLocationsPass(deps, { budget: 2 }));
    expect(outcome.details).toMatchObject({
      due: ids.length,
      planned: 2,
      refreshed: 2,
      skippedForBudget: ids.length - 2,
    });
    expect(outcome.requests).toBe(4);
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
    const outcome = await h.run('locations', everyLocation);
    expect(outcome.details).toMatchObject({ gone: 1 });
    expect((await location(id)).deleted_at).not.toBeNull();
    expect((await versionsOf(id)).every((v) => v.valid_to !== null)).toBe(true);
    await ingestFeed();
    expect((await location(id)).deleted_at).not.toBeNull();
    expect((await versionsOf(id)).every((v) => v.valid_to !== null)).toBe(true);
  });

  it('a failing API ends the pass early as failed, writing nothing wrong; failed reads are not recorded', async () => {
    const readsBefore = await readsOfLocations();
    h.sim.control.faults.set({ serverErrorRate: 1 });
    try {
      const outcome = await h.run('locations', everyLocation);
      expect(outcome.status).toBe('failed');
      expect(outcome.details).toMatchObject({ failed: 3, stoppedEarly: true, gone: 0 });
    } finally {
      h.sim.control.faults.reset();
    }
    expect(await readsOfLocations()).toEqual(readsBefore);
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

describe('locations on the adaptive cadence (docs/freshness.md)', () => {
  const known = async () =>
    (await h.database.db.selectFrom('rewards.locations').select('id').orderBy('id').execute()).map(
      (row) => row.id,
    );
  const intervalOf = (reads: Awaited<ReturnType<typeof readsOfLocations>>, kind: string, id: string) =>
    reads.get(`${kind} ${id}`)!.interval_seconds;

  it('a pass reads only what is due: nothing right after every location was read', async () => {
    const all = await known();
    await h.run('locations', everyLocation);
    const reads = await readsOfLocations();
    expect(reads.size).toBe(2 * all.length);
    for (const kind of ['location.full', 'location.open_hours'] as const) {
      const { floorMs, ceilingMs } = h.config.freshness.cadences[kind];
      for (const id of all) {
        expect(intervalOf(reads, kind, id) * 1000).toBeGreaterThanOrEqual(floorMs);
        expect(intervalOf(reads, kind, id) * 1000).toBeLessThanOrEqual(ceilingMs);
      }
    }
    const quiet = await h.run('locations', (deps) => runLocationsPass(deps, { budget: 1000 }));
    expect(quiet.status).toBe('succeeded');
    expect(quiet.requests).toBe(0);
    expect(quiet.details).toMatchObject({ known: all.length, due: 0, planned: 0, neverRefreshed: 0 });
  });

  it('changed open hours halve their interval, a new version halves the full form’s; unchanged kinds stretch', async () => {
    const all = await known();
    const live = all.filter((id) => h.sim.control.locations.list().some((l) => l['id'] === id));
    const [hoursChanged, edited] = live;
    const before = await readsOfLocations();
    h.sim.control.locations.update(hoursChanged!, {
      openHours: [{ day_of_week: 2, opens_at: '07:30', closes_at: '23:30' }],
    });
    h.sim.control.locations.update(edited!, { name: 'Edited for the cadence' });
    const outcome = await h.run('locations', everyLocation);
    expect(outcome.details).toMatchObject({ newVersions: 1, openHoursChanged: 1 });
    const after = await readsOfLocations();
    const ceiling = (kind: 'location.full' | 'location.open_hours') =>
      h.config.freshness.cadences[kind].ceilingMs / 1000;
    const halved = (kind: string, id: string) =>
      expect(intervalOf(after, kind, id)).toBeCloseTo(intervalOf(before, kind, id) / 2, -1);
    const stretched = (kind: 'location.full' | 'location.open_hours', id: string) =>
      expect(intervalOf(after, kind, id)).toBeCloseTo(
        Math.min(ceiling(kind), intervalOf(before, kind, id) * 1.5),
        -1,
      );
    halved('location.open_hours', hoursChanged!);
    stretched('location.full', hoursChanged!);
    halved('location.full', edited!);
    stretched('location.open_hours', edited!);
    const hours = await h.database.db
      .selectFrom('rewards.location_open_hours')
      .select('hours')
      .where('location_id', '=', hoursChanged!)
      .executeTakeFirstOrThrow();
    expect(hours.hours).toMatchObject({ open_hours: [{ opens_at: '07:30', closes_at: '23:30' }] });

    // The interval just halved is the shortest: a pass when it has passed reads that kind alone.
    const soon = fixedClock(
      new Date(h.clock.now().getTime() + intervalOf(after, 'location.open_hours', hoursChanged!) * 1000),
    );
    const next = await h.run('locations', runLocationsPass, { clock: soon });
    expect(next.details).toMatchObject({ openHoursDue: 1, openHours: 1, openHoursChanged: 0 });
    expect(next.requests).toBeGreaterThanOrEqual(1);
  });

  it('past the ceiling every location is due, both kinds', async () => {
    const all = await known();
    const lastRead = Math.max(
      ...[...(await readsOfLocations()).values()].map((r) => r.last_read_at.getTime()),
    );
    const later = fixedClock(new Date(lastRead + 7 * 24 * HOUR + 60_000));
    const due = await h.run('locations', (deps) => runLocationsPass(deps, { budget: 1000 }), {
      clock: later,
    });
    expect(due.details).toMatchObject({
      due: all.length,
      planned: all.length,
      fullFormsDue: all.length,
      openHoursDue: all.length,
    });
  });
});
