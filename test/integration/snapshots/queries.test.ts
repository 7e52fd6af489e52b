import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChallengesPass } from '../../../src/streams/challenges.js';
import { runRestaurantsPass } from '../../../src/streams/restaurants.js';
import { startHarness, type SnapshotHarness } from './harness.js';

// The example queries of docs/snapshots.md, run as written there.
const doc = readFileSync(new URL('../../../docs/snapshots.md', import.meta.url), 'utf8');
const [stateAtQuery, endedLastWeekQuery] = [...doc.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!);

let h: SnapshotHarness;
let client: pg.Client;
beforeAll(async () => {
  h = await startHarness('snap_queries');
  client = new pg.Client({ connectionString: h.database.url });
  await client.connect();
  await client.query(`set time zone 'UTC'`);
});
afterAll(async () => {
  await client?.end();
  await h?.close();
});

function mondayUtc(d: Date): Date {
  const day = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  return new Date(day.getTime() - ((day.getUTCDay() + 6) % 7) * 86_400_000);
}

describe('docs/snapshots.md queries', () => {
  it('the document has both queries', () => {
    expect(stateAtQuery).toContain('restaurants_history');
    expect(endedLastWeekQuery).toContain('end_time');
  });

  it('state of a restaurant at a given date', async () => {
    await h.run('restaurants', runRestaurantsPass);
    const beforeRename = new Date(h.clock.now().getTime() - 30_000); // between the two passes
    const id = String(h.sim.control.restaurants.list()[0]!['id']);
    const originalName = String(h.sim.control.restaurants.list()[0]!['name']);
    h.sim.control.restaurants.update(id, { name: 'The Renamed Place' });
    await h.run('restaurants', runRestaurantsPass);
    const afterRename = h.clock.now();

    const at = async (instant: Date) =>
      (await client.query<{ name: string }>(stateAtQuery!, [id, instant.toISOString()])).rows;
    expect(await at(new Date('2020-01-01T00:00:00Z'))).toEqual([]);
    expect((await at(beforeRename)).map((r) => r.name)).toEqual([originalName]);
    expect((await at(afterRename)).map((r) => r.name)).toEqual(['The Renamed Place']);
  });

  it('challenges that ended last week', async () => {
    await h.run('challenges', runChallengesPass);
    const ends = h.sim.control.challenges
      .list()
      .filter((c) => c['end_time'] !== null)
      .map((c) => ({ id: String(c['id']), end: new Date(String(c['end_time'])) }));
    expect(ends.length).toBeGreaterThan(0);
    // "today" a week after the first challenge's end: that challenge ended last week.
    const today = new Date(ends[0]!.end.getTime() + 7 * 86_400_000);
    const thisWeek = mondayUtc(today);
    const lastWeek = new Date(thisWeek.getTime() - 7 * 86_400_000);
    const expected = ends.filter((c) => c.end >= lastWeek && c.end < thisWeek).map((c) => c.id);
    expect(expected).toContain(ends[0]!.id);

    const { rows } = await client.query<{ id: string }>(endedLastWeekQuery!, [today.toISOString()]);
    expect(rows.map((r) => r.id).sort()).toEqual(expected.sort());
  });
});
