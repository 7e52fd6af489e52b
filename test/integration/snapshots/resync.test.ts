import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChallengesPass } from '../../../src/streams/challenges.js';
import { runLocationsPass } from '../../../src/streams/locations.js';
import { runRestaurantsPass } from '../../../src/streams/restaurants.js';
import { runResync } from '../../../src/streams/resync.js';
import type { PassResult } from '../../../src/streams/passes.js';
import { upsertEmbeddedLocations } from '../../../src/warehouse/locations.js';
import { startHarness, type SnapshotHarness } from './harness.js';

let h: SnapshotHarness;
beforeAll(async () => {
  h = await startHarness('snap_resync', { pageSize: 50 });
});
afterAll(async () => {
  await h?.close();
});

const open = { from: null, to: null };
const resync = async (
  stream: 'restaurants' | 'locations' | 'challenges' | 'balance',
): Promise<PassResult> => {
  const result = await runResync(h.deps(), stream, { range: open, wait: false });
  h.clock.advance(60_000);
  return result;
};

/**
 * The stored current version of a record made to disagree with its own hash: what a version written
 * by an older release (whose rules read the record differently) or edited by hand looks like.
 */
async function storedVersionDisagrees(table: 'restaurants_history' | 'challenges_history', id: string) {
  await sql`update ${sql.table(`rewards.${table}`)} set raw = raw || '{"title":"stale","name":"stale"}'::jsonb
            where id = ${id} and valid_to is null`.execute(h.database.db);
}

const currentVersion = (table: 'restaurants_history' | 'challenges_history', id: string) =>
  sql<{ raw: Record<string, unknown>; n: string }>`
    select (select raw from ${sql.table(`rewards.${table}`)} where id = ${id} and valid_to is null) as raw,
           (select count(*) from ${sql.table(`rewards.${table}`)} where id = ${id}) as n`
    .execute(h.database.db)
    .then((r) => r.rows[0]!);

describe('resync of snapshots ignores their short-cuts', () => {
  it('restaurants: a stored version whose hash hides a difference is compared by content and replaced', async () => {
    expect((await h.run('restaurants', runRestaurantsPass)).status).toBe('succeeded');
    const id = String(h.sim.control.restaurants.list()[0]!['id']);
    const name = String(h.sim.control.restaurants.list()[0]!['name']);
    await storedVersionDisagrees('restaurants_history', id);

    // The plain pass trusts the stored hash: the history keeps the stale version.
    expect((await h.run('restaurants', runRestaurantsPass)).status).toBe('succeeded');
    expect((await currentVersion('restaurants_history', id)).raw['name']).toBe('stale');

    const result = await resync('restaurants');
    expect(result.status).toBe('succeeded');
    const after = await currentVersion('restaurants_history', id);
    expect(after.raw['name']).toBe(name);
    expect(Number(after.n)).toBe(2);
    // Records whose stored versions agree get no new version from a re-sync.
    const versions = await sql<{ n: string }>`select count(*) as n from rewards.restaurants_history`.execute(
      h.database.db,
    );
    expect(Number(versions.rows[0]!.n)).toBe(h.sim.control.restaurants.list().length + 1);
  });

  it('challenges: the same, per restaurant', async () => {
    expect((await h.run('challenges', runChallengesPass)).status).toBe('succeeded');
    const challenge = h.sim.control.challenges.list()[0]!;
    const id = String(challenge['id']);
    await storedVersionDisagrees('challenges_history', id);
    await h.run('challenges', (deps) => runChallengesPass(deps, { everyRecord: true }));
    expect((await currentVersion('challenges_history', id)).raw['title']).toBe('stale');

    expect((await resync('challenges')).status).toBe('succeeded');
    expect((await currentVersion('challenges_history', id)).raw['title']).toBe(challenge['title']);
  });

  it('locations: every full form and open hours are re-read, not only those due within the budget', async () => {
    const now = h.sim.control.clock.now();
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
    }
    const known = await h.database.db.selectFrom('rewards.locations').select('id').execute();
    expect(known.length).toBeGreaterThan(2);
    await h.run('locations', (deps) => runLocationsPass(deps, { budget: known.length }));
    const [a, b] = known.map((row) => row.id);
    h.sim.control.locations.update(a!, { name: 'Renamed A' });
    h.sim.control.locations.update(b!, { name: 'Renamed B' });

    // A pass within a budget of one location reaches at most one of them.
    await h.run('locations', (deps) => runLocationsPass(deps, { budget: 1 }));
    const names = async () =>
      (
        await h.database.db
          .selectFrom('rewards.locations')
          .select('name')
          .where('id', 'in', [a!, b!])
          .execute()
      ).map((row) => row.name);
    expect((await names()).filter((n) => n?.startsWith('Renamed')).length).toBeLessThanOrEqual(1);

    const result = await resync('locations');
    expect(result).toMatchObject({
      status: 'succeeded',
      requests: 2 * known.length,
      details: { planned: known.length, fullFormsDue: known.length, openHoursDue: known.length },
    });
    expect((await names()).sort()).toEqual(['Renamed A', 'Renamed B']);
  });

  it('balance: one read, recorded as a pass of the stream', async () => {
    const result = await resync('balance');
    expect(result.status).toBe('succeeded');
    const runs = await h.database.db
      .selectFrom('rewards.sync_runs')
      .select('status')
      .where('stream', '=', 'balance')
      .execute();
    expect(runs).toEqual([{ status: 'succeeded' }]);
  });
});
