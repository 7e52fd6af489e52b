import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { runChallengesPass } from '../../../src/streams/challenges.js';
import { runRestaurantsPass } from '../../../src/streams/restaurants.js';
import { createTestDatabase, whileRowRefused, type TestDatabase } from '../../helpers/db.js';
import { createPipelineHarness, type PipelineHarness } from '../../helpers/pipeline.js';

// The second line of defence on snapshot pages: a record the warehouse refuses with a data error
// (a value validation could not know about; here a trigger) becomes a rejected record, the rest of
// its page is stored, and the refused record still counts as seen (no deletion from it).

describe('a snapshot record the database refuses', () => {
  let sim: RunningSimulator;
  let t: TestDatabase;
  let h: PipelineHarness;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 21, checkIns: 50, days: 1 });
    t = await createTestDatabase('snapshot_refused');
    h = createPipelineHarness({ sim, db: t.db, label: 'snapshot-refused', env: { SVC_PAGE_SIZE: '5' } });
  });
  afterAll(async () => {
    await h?.close();
    await t?.drop();
    await sim?.close();
  });

  const refusing = <T>(table: 'restaurants' | 'challenges', id: string, run: () => Promise<T>) =>
    whileRowRefused(t.db, { table, id, sqlstate: '22003' }, run);

  const rejectionsOf = (stream: string) =>
    t.db
      .selectFrom('rewards.rejected_records')
      .select(['record_id', 'reason'])
      .where('stream', '=', stream)
      .execute();

  it('restaurants: the page around it is stored, it is rejected naming the SQLSTATE, the pass succeeds', async () => {
    const all = sim.control.restaurants.list().map((r) => ({ id: String(r['id']) }));
    const victim = all[7]!.id;
    const outcome = await refusing('restaurants', victim, () => runRestaurantsPass(h.deps));
    expect(outcome.status).toBe('succeeded');
    expect(outcome.details).toMatchObject({ written: all.length - 1, rejected: 1 });
    const stored = await t.db.selectFrom('rewards.restaurants').select('id').execute();
    expect(stored.map((r) => r.id).sort()).toEqual(
      all
        .map((r) => r.id)
        .filter((id) => id !== victim)
        .sort(),
    );
    expect(await rejectionsOf('restaurants')).toEqual([
      { record_id: victim, reason: expect.stringContaining('SQLSTATE 22003') as string },
    ]);
  });

  it('a stored restaurant refused on a later pass is not marked deleted', async () => {
    const victim = String(sim.control.restaurants.list()[3]!['id']);
    const outcome = await refusing('restaurants', victim, () => runRestaurantsPass(h.deps));
    expect(outcome.status).toBe('succeeded');
    const row = await t.db
      .selectFrom('rewards.restaurants')
      .select('deleted_at')
      .where('id', '=', victim)
      .executeTakeFirstOrThrow();
    expect(row.deleted_at).toBeNull();
  });

  it('challenges: same rule, the other challenges of the restaurant are stored', async () => {
    await runRestaurantsPass(h.deps);
    const clean = await runChallengesPass(h.deps);
    expect(clean.status).toBe('succeeded');
    const stored = await t.db.selectFrom('rewards.challenges').select(['id', 'restaurant_id']).execute();
    expect(stored.length).toBeGreaterThan(1);
    const victim = stored[0]!.id;
    await t.db.deleteFrom('rewards.challenges').execute();
    const outcome = await refusing('challenges', victim, () =>
      runChallengesPass(h.deps, { everyRecord: true }),
    );
    expect(outcome.status).toBe('succeeded');
    const after = await t.db.selectFrom('rewards.challenges').select('id').execute();
    expect(after.length).toBe(stored.length - 1);
    expect(await rejectionsOf('challenges')).toEqual([
      { record_id: victim, reason: expect.stringContaining('SQLSTATE 22003') as string },
    ]);
  });
});
