import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import type { ListedRestaurant } from '../../../src/records/index.js';
import { runRestaurantsPass } from '../../../src/streams/restaurants.js';
import { mapPages, startHarness, type SnapshotHarness } from './harness.js';

let h: SnapshotHarness;
beforeAll(async () => {
  h = await startHarness('snap_restaurants');
});
afterAll(async () => {
  await h?.close();
});

/** The API with some restaurants left out of the list (total_count adjusted, as if they were gone). */
function hiding(ids: ReadonlySet<string>): PartnerApi {
  return {
    ...h.api,
    restaurantPages: (options) =>
      mapPages(h.api.restaurantPages(options), (page) => ({
        ...page,
        records: page.records.filter((r) => !ids.has(r.id)),
        pagination: { ...page.pagination, totalCount: page.pagination.totalCount - ids.size },
      })),
  };
}

const historyOf = (id: string) =>
  h.database.db
    .selectFrom('rewards.restaurants_history')
    .selectAll()
    .where('id', '=', id)
    .orderBy('valid_from')
    .execute();
const row = (id: string) =>
  h.database.db.selectFrom('rewards.restaurants').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const historyCount = async () =>
  Number(
    (
      await h.database.db
        .selectFrom('rewards.restaurants_history')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('restaurants snapshot', () => {
  let ids: string[];

  it('a first complete pass stores every restaurant with one version each', async () => {
    const outcome = await h.run('restaurants', runRestaurantsPass);
    const listed = h.sim.control.restaurants.list();
    ids = listed.map((r) => String(r['id']));
    expect(outcome.status).toBe('succeeded');
    expect(outcome.details).toMatchObject({
      pages: Math.ceil(listed.length / 5),
      seen: listed.length,
      new: listed.length,
    });
    // The worker follows it with a challenges pass (registry.ts reads the signal, not the details).
    expect(outcome.followUps).toEqual({ newRestaurants: listed.length });
    expect(await historyCount()).toBe(listed.length);
  });

  it('epoch-second created_at / updated_at from the list are stored as the same instants', async () => {
    // The control lists the embedded form (ISO 8601) of the same records.
    for (const listed of h.sim.control.restaurants.list().slice(0, 5)) {
      const stored = await row(String(listed['id']));
      expect(stored.created_at?.toISOString()).toBe(new Date(String(listed['created_at'])).toISOString());
      expect(stored.updated_at?.toISOString()).toBe(new Date(String(listed['updated_at'])).toISOString());
      expect(stored.cuisine).toEqual(listed['cuisine']);
      expect(stored.deleted_at).toBeNull();
    }
  });

  it('an unchanged pass opens no version', async () => {
    const outcome = await h.run('restaurants', runRestaurantsPass);
    expect(outcome.details).toMatchObject({
      newVersions: 0,
      unchanged: ids.length,
      deletions: { marked: 0 },
    });
    expect(await historyCount()).toBe(ids.length);
  });

  it('a new signed-URL expiry on the images is not a new version', async () => {
    const reSigned: PartnerApi = {
      ...h.api,
      restaurantPages: (options) =>
        mapPages(h.api.restaurantPages(options), (page) => ({
          ...page,
          records: page.records.map((r): ListedRestaurant => {
            const raw = r.raw as Record<string, unknown>;
            const asset = raw['asset'] as Record<string, string>;
            const resign = (url: string) => url.replace(/expires=\d+/, 'expires=9999999999');
            const newAsset = Object.fromEntries(Object.entries(asset).map(([k, v]) => [k, resign(v)]));
            return { ...r, raw: { ...raw, asset: newAsset } };
          }),
        })),
    };
    const outcome = await h.run('restaurants', runRestaurantsPass, { api: reSigned });
    expect(outcome.details).toMatchObject({ newVersions: 0 });
    expect(await historyCount()).toBe(ids.length);
  });

  it('a content change opens exactly one version and closes the previous one where it starts', async () => {
    const id = ids[0]!;
    const before = h.clock.now();
    h.sim.control.restaurants.update(id, { name: 'Renamed Bistro', price: 4 });
    const outcome = await h.run('restaurants', runRestaurantsPass);
    expect(outcome.details).toMatchObject({ newVersions: 1, changed: 1 });
    const versions = await historyOf(id);
    expect(versions).toHaveLength(2);
    expect(versions[0]!.valid_to?.toISOString()).toBe(versions[1]!.valid_from.toISOString());
    expect(versions[1]!.valid_from.getTime()).toBeGreaterThanOrEqual(before.getTime());
    expect(versions[1]!.valid_to).toBeNull();
    expect((versions[1]!.raw as { name: string }).name).toBe('Renamed Bistro');
    expect((await row(id)).name).toBe('Renamed Bistro');
  });

  it('a restaurant gone from a complete pass is marked deleted and its version closed', async () => {
    const id = ids[1]!;
    h.sim.control.restaurants.remove(id);
    const outcome = await h.run('restaurants', runRestaurantsPass);
    expect(outcome.status).toBe('succeeded');
    expect(outcome.details).toMatchObject({ deletions: { marked: 1 } });
    expect((await row(id)).deleted_at).not.toBeNull();
    expect((await historyOf(id)).every((v) => v.valid_to !== null)).toBe(true);
  });

  it('a restaurant that comes back is un-deleted and gets a new current version', async () => {
    const id = ids[2]!;
    await h.run('restaurants', runRestaurantsPass, { api: hiding(new Set([id])) });
    expect((await row(id)).deleted_at).not.toBeNull();
    const outcome = await h.run('restaurants', runRestaurantsPass);
    expect(outcome.details).toMatchObject({ restored: 1 });
    expect((await row(id)).deleted_at).toBeNull();
    const versions = await historyOf(id);
    expect(versions).toHaveLength(2);
    expect(versions.filter((v) => v.valid_to === null)).toHaveLength(1);
    expect(versions[1]!.valid_from.getTime()).toBeGreaterThanOrEqual(versions[0]!.valid_to!.getTime());
  });

  it('a pass that fails mid-way (5xx) marks no deletion and says so', async () => {
    const id = ids[3]!;
    h.sim.control.restaurants.remove(id);
    const failing: PartnerApi = {
      ...h.api,
      restaurantPages: (options) =>
        mapPages(h.api.restaurantPages(options), (page, index) => {
          if (index === 0) h.sim.control.faults.set({ serverErrorRate: 1 });
          return page;
        }),
    };
    try {
      const outcome = await h.run('restaurants', runRestaurantsPass, { api: failing });
      expect(outcome.status).toBe('partial');
      expect(outcome.error).toBeDefined();
      expect(outcome.details).toMatchObject({
        pages: 1,
        deletions: { suppressed: 'pass_incomplete', wouldHaveMarked: 18 },
      });
    } finally {
      h.sim.control.faults.reset();
    }
    expect((await row(id)).deleted_at).toBeNull();
  });

  it('a pass aborted mid-way marks no deletion', async () => {
    const id = ids[3]!;
    const controller = new AbortController();
    const aborting: PartnerApi = {
      ...h.api,
      restaurantPages: (options) =>
        mapPages(h.api.restaurantPages(options), (page, index) => {
          if (index === 1) controller.abort(new Error('shutting down'));
          return page;
        }),
    };
    await expect(
      h.run('restaurants', runRestaurantsPass, { api: aborting, signal: controller.signal }),
    ).rejects.toThrow();
    expect((await row(id)).deleted_at).toBeNull();
  });

  it('a suspiciously short pass marks no deletion; a second one at the same count confirms the drop', async () => {
    // ids[3] is really gone (removed above); hide 6 more of the remaining 21 (> 20% drop).
    const hidden = new Set(ids.slice(4, 10));
    const first = await h.run('restaurants', runRestaurantsPass, { api: hiding(hidden) });
    expect(first.status).toBe('partial');
    expect(first.details).toMatchObject({
      seen: 16,
      deletions: { suppressed: 'short_pass', wouldHaveMarked: 7 },
    });
    for (const id of [...hidden, ids[3]!]) expect((await row(id)).deleted_at).toBeNull();

    const second = await h.run('restaurants', runRestaurantsPass, { api: hiding(hidden) });
    expect(second.status).toBe('succeeded');
    expect(second.details).toMatchObject({ deletions: { marked: 7 } });
    for (const id of [...hidden, ids[3]!]) expect((await row(id)).deleted_at).not.toBeNull();

    // Back to the full list: the hidden ones return.
    const back = await h.run('restaurants', runRestaurantsPass);
    expect(back.details).toMatchObject({ restored: 6 });
  });

  it('a malformed record goes to rejected_records and is not taken for a deletion', async () => {
    const id = ids[10]!;
    const corrupting: PartnerApi = {
      ...h.api,
      restaurantPages: (options) =>
        mapPages(h.api.restaurantPages(options), (page) => {
          const bad = page.records.find((r) => r.id === id);
          if (bad === undefined) return page;
          return {
            ...page,
            records: page.records.filter((r) => r.id !== id),
            rejections: [
              ...page.rejections,
              { recordId: id, reason: 'price: expected int', payload: bad.raw },
            ],
          };
        }),
    };
    const outcome = await h.run('restaurants', runRestaurantsPass, { api: corrupting });
    expect(outcome.status).toBe('succeeded');
    expect(outcome.details).toMatchObject({ rejected: 1, rejectedOnly: 1, deletions: { marked: 0 } });
    expect((await row(id)).deleted_at).toBeNull();
    const rejected = await h.database.db
      .selectFrom('rewards.rejected_records')
      .selectAll()
      .where('stream', '=', 'restaurants')
      .execute();
    expect(rejected.map((r) => r.record_id)).toEqual([id]);
  });

  it('exactly one current version per live restaurant, none for a deleted one', async () => {
    const { rows } = await sql<{ id: string; current: string; deleted: boolean }>`
      select r.id, count(h.*) filter (where h.valid_to is null) as current, r.deleted_at is not null as deleted
      from rewards.restaurants r left join rewards.restaurants_history h on h.id = r.id
      group by r.id, r.deleted_at`.execute(h.database.db);
    for (const r of rows) expect(Number(r.current)).toBe(r.deleted ? 0 : 1);
  });
});
