import { describe, expect, test } from 'vitest';
import {
  createSimulator,
  PRODUCTION_WORLD_SIZE,
  worldOptionsFromFlags,
  type Simulator,
  type WorldSize,
} from '../../src/simulator/index.js';
import { ANCHOR, callIn } from './sim-fixture.js';

const fixed = { anchor: ANCHOR, clock: { now: () => ANCHOR } };

async function pendingIntents(sim: Simulator): Promise<number> {
  const bearer = await sim.control.credentials.accessToken();
  let pending = 0;
  for (let page = 0; ; page++) {
    const res = await callIn(sim, `/payment_intents?page_size=500&page=${page}`, { bearer });
    pending += res.json.payment_intents.filter((i: any) => i.status === 'pending').length;
    if (res.json.pagination.next_page === null) return pending;
  }
}

/** A member's own grant, exchanged at the token endpoint as the pipeline does. */
async function profileWithGrant(sim: Simulator, refreshToken: string): Promise<any> {
  const form = new URLSearchParams({
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: sim.credentials.clientId,
    client_secret: sim.credentials.clientSecret,
  });
  const token = await sim.handle({
    method: 'POST',
    url: '/v1/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  });
  const bearer = JSON.parse(token.body).access_token as string;
  return (await callIn(sim, '/users/me', { bearer })).json;
}

describe('world size', () => {
  test('sizes: restaurants, locations, challenges, members and open intents are as asked, as the API serves them', async () => {
    const size: WorldSize = {
      restaurants: 300,
      locations: 1_000,
      challenges: 700,
      members: 250,
      openIntents: 60,
    };
    const sim = createSimulator({ ...fixed, seed: 5, checkIns: 2_000, days: 7, size });
    const apiKey = sim.credentials.apiKey;

    const restaurants = (await callIn(sim, '/restaurants?page_size=500', { apiKey })).json;
    expect(restaurants.pagination.total_count).toBe(300);

    // The control lists the reduced form GET /locations/{id} serves; a sample is read through the API.
    const locations = sim.control.locations.list();
    expect(locations).toHaveLength(1_000);
    for (const l of locations.filter((_, i) => i % 50 === 0))
      expect((await callIn(sim, `/locations/${String(l['id'])}`, { apiKey })).json).toEqual(l);
    const restaurantIds = new Set(locations.map((l) => (l['restaurant'] as { id: string }).id));
    expect(restaurantIds.size).toBe(300); // every restaurant has a location

    let challenges = 0;
    for (const r of restaurants.restaurants) {
      const res = await callIn(sim, `/challenges?restaurant=${r.id}&page_size=500`, { apiKey });
      challenges += res.json.pagination.total_count;
    }
    expect(challenges).toBe(700);

    const grants = sim.control.members.issueRefreshTokens();
    expect(grants).toHaveLength(250);
    expect(new Set(grants.map((g) => g.memberId)).size).toBe(250);
    for (const grant of [grants[0]!, grants[123]!, grants[249]!])
      expect((await profileWithGrant(sim, grant.refreshToken)).id).toBe(grant.memberId);

    expect(await pendingIntents(sim)).toBe(60);
    expect(sim.control.world.info().size).toMatchObject({ ...size, checkIns: 2_000 });
  });

  test('production size: 5,000 restaurants, 20,000 locations, 10,000 challenges, 10,000 members, 1,000 open intents', async () => {
    const sim = createSimulator({ ...fixed, seed: 8, checkIns: 20_000, size: PRODUCTION_WORLD_SIZE });
    expect(sim.control.world.info().size).toEqual({ ...PRODUCTION_WORLD_SIZE, checkIns: 20_000 });
    const apiKey = sim.credentials.apiKey;
    expect((await callIn(sim, '/restaurants?page_size=1', { apiKey })).json.pagination.total_count).toBe(
      5_000,
    );
    expect(await pendingIntents(sim)).toBe(1_000);
    const members = sim.control.members.list();
    const last = members[members.length - 1]!;
    const bearer = await sim.control.credentials.accessToken({ memberId: last.id });
    for (const path of ['', '/status', '/wallets', '/tags', '/check_ins', '/memberships'])
      expect([200, 404]).toContain((await callIn(sim, `/users/me${path}`, { bearer })).status);
  });

  test('the fixture members keep their roles at any size; member i is the same member whatever the size', async () => {
    const small = createSimulator({ ...fixed, seed: 5, checkIns: 500, size: { members: 40 } });
    const large = createSimulator({
      ...fixed,
      seed: 5,
      checkIns: 500,
      size: { members: 90, restaurants: 24 },
    });
    const ids = (sim: Simulator) => sim.control.members.list().map((m) => m.id);
    expect(ids(large).slice(0, 40)).toEqual(ids(small));
    const [first, second] = large.control.members.list();
    expect(first!.id).toBe(large.control.members.defaultMemberId);
    expect(second!.hasActiveStatus).toBe(false);
    expect(BigInt(second!.spendingBalance)).toBeLessThan(10n ** 18n);
    const bearer = await large.control.credentials.accessToken();
    expect((await callIn(large, '/users/me/tags', { bearer })).json.tags[0].type).toBe('industry');
  });

  test('a count out of range stops the simulator with an error naming it', () => {
    const make = (size: Partial<WorldSize>) => () => createSimulator({ ...fixed, checkIns: 10, size });
    expect(make({ restaurants: 0 })).toThrow(/restaurants/);
    expect(make({ restaurants: 10, locations: 9 })).toThrow(/locations \(9\) must be at least restaurants/);
    expect(make({ members: 3 })).toThrow(/members must be a whole number from 4/);
    expect(make({ openIntents: 1.5 })).toThrow(/openIntents/);
  });
});

describe('simulator command flags', () => {
  test('--world production sizes the world; single counts override it', () => {
    expect(worldOptionsFromFlags({ world: 'production', members: 500 }).size).toEqual({
      ...PRODUCTION_WORLD_SIZE,
      members: 500,
    });
    expect(worldOptionsFromFlags({}).size).toEqual({});
    expect(() => worldOptionsFromFlags({ world: 'huge' })).toThrow(
      /--world must be one of fixture, production/,
    );
    expect(() => worldOptionsFromFlags({ restaurants: 10, locations: 3 })).toThrow(/locations/);
  });

  test('--changes and --change name=value set the change model; durations, auto and activity classes parse', () => {
    expect(worldOptionsFromFlags({}).changes).toBe(false);
    expect(worldOptionsFromFlags({ changes: true }).changes).toEqual({});
    const { changes, timeScale } = worldOptionsFromFlags({
      change: [
        'statusEveryMs=3d',
        'intentsPerHour=auto',
        'tierMoveShare=0.5',
        'memberActivity=0.2:2h,0.8:10d',
      ],
      timeScale: '1440',
    });
    expect(changes).toEqual({
      statusEveryMs: 3 * 86_400_000,
      intentsPerHour: null,
      tierMoveShare: 0.5,
      memberActivity: [
        { share: 0.2, visitEveryMs: 2 * 3_600_000 },
        { share: 0.8, visitEveryMs: 10 * 86_400_000 },
      ],
    });
    expect(timeScale).toBe(1440);
    expect(() => worldOptionsFromFlags({ change: ['statusEvery=3d'] })).toThrow(/--change takes name=value/);
    expect(() => worldOptionsFromFlags({ change: ['statusEveryMs=soon'] })).toThrow(/statusEveryMs/);
    expect(() => worldOptionsFromFlags({ change: ['tierMoveShare=2'] })).toThrow(/tierMoveShare/);
    expect(() => worldOptionsFromFlags({ change: ['memberActivity=0.5:2h'] })).toThrow(/add up to 1/);
    expect(() => worldOptionsFromFlags({ timeScale: '0' })).toThrow(/time scale/);
  });
});
