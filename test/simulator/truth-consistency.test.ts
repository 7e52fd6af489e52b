import { expect, test } from 'vitest';
import { createSimulator, TRUTH_KINDS, type Simulator, type TruthKind } from '../../src/simulator/index.js';
import { ANCHOR, callIn } from './sim-fixture.js';

const HOUR = 3_600_000;

/** A small world whose every kind of record changes within hours, and no feed arrivals to step over. */
function busyWorld(): Simulator {
  return createSimulator({
    seed: 9,
    anchor: ANCHOR,
    clock: { now: () => ANCHOR },
    checkIns: 1_000,
    days: 2,
    size: { restaurants: 4, locations: 9, challenges: 8, members: 8, openIntents: 4 },
    changes: {
      memberActivity: [{ share: 1, visitEveryMs: 3 * HOUR }],
      statusEveryMs: 8 * HOUR,
      tagsEveryMs: 10 * HOUR,
      profileEveryMs: 10 * HOUR,
      restaurantEditEveryMs: 8 * HOUR,
      locationEditEveryMs: 10 * HOUR,
      openHoursEditEveryMs: 10 * HOUR,
      challengeAddedEveryMs: 10 * HOUR,
      challengeLifetimeMs: 4 * HOUR,
      intentOpenMs: HOUR,
      refundShare: 0.5,
      refundAfterMs: 2 * HOUR,
      feedCheckInsPerDay: 0,
    },
  });
}

/** What the API serves for every record of every kind, keyed `kind:id` (absent records are absent). */
async function served(
  sim: Simulator,
  intentIds: Set<string>,
  bearers: Map<string, string>,
): Promise<Map<string, string>> {
  const apiKey = sim.credentials.apiKey;
  const out = new Map<string, string>();
  const memberRoutes: [TruthKind, string][] = [
    ['member.profile', ''],
    ['member.status', '/status'],
    ['member.wallets', '/wallets'],
    ['member.tags', '/tags'],
    ['member.visits', '/check_ins?page_size=1000'],
    ['member.memberships', '/memberships?page_size=1000'],
  ];
  for (const member of sim.control.members.list()) {
    const bearer = bearers.get(member.id) ?? '';
    for (const [kind, path] of memberRoutes) {
      const res = await callIn(sim, `/users/me${path}`, { bearer });
      out.set(`${kind}:${member.id}`, `${res.status} ${res.text}`);
    }
  }
  const restaurants = (await callIn(sim, '/restaurants?page_size=500', { apiKey })).json.restaurants;
  for (const r of restaurants) {
    out.set(`restaurant:${r.id}`, JSON.stringify(r));
    const challenges = await callIn(sim, `/challenges?restaurant=${r.id}&page_size=500`, { apiKey });
    out.set(`restaurant.challenges:${r.id}`, challenges.text);
  }
  for (const location of sim.control.locations.list()) {
    const id = String(location['id']);
    const reduced = await callIn(sim, `/locations/${id}`, { apiKey });
    // The full form is served embedded in the venue feed; its embedded restaurant is the restaurant's.
    const feed = await callIn(sim, `/check_ins?location=${id}&page_size=1`, { apiKey });
    const { restaurant: _embedded, ...full } = feed.json.check_ins[0].location;
    out.set(`location:${id}`, `${reduced.text} ${JSON.stringify(full)}`);
    out.set(`location.open_hours:${id}`, (await callIn(sim, `/locations/${id}/open_hours`, { apiKey })).text);
  }
  const bearer = bearers.get(sim.control.members.defaultMemberId) ?? '';
  for (const intent of (await callIn(sim, '/payment_intents?page_size=500', { bearer })).json.payment_intents)
    intentIds.add(intent.id);
  for (const id of intentIds) {
    const res = await callIn(sim, `/payment_intents/${id}`, { bearer });
    if (res.status === 200) out.set(`intent:${id}`, res.text);
  }
  return out;
}

test('truth: a change logged at T is served from T on and not at T − 1 ms, and nothing unlogged changes', async () => {
  const sim = busyWorld();
  const seen = new Map<TruthKind, number>();
  const intentIds = new Set<string>();
  let steps = 0;
  for (; steps < 150 && seen.size < TRUTH_KINDS.length - 1; steps++) {
    const nextAt = sim.control.world.info().timeline.nextAt;
    expect(nextAt).not.toBeNull();
    const at = Date.parse(nextAt!);
    sim.control.world.advanceTo(new Date(at - 1));
    const bearers = new Map<string, string>(); // access tokens live an hour of simulated time
    for (const member of sim.control.members.list())
      bearers.set(member.id, await sim.control.credentials.accessToken({ memberId: member.id }));
    const before = await served(sim, intentIds, bearers);
    sim.control.world.advanceTo(new Date(at));
    const after = await served(sim, intentIds, bearers);

    const logged = new Set<string>();
    for (const change of sim.control.world.truth.changesSince(at - 1, at)) {
      expect(change.atMs).toBe(at);
      expect(sim.control.world.truth.lastChangedAt(change.kind, change.id)).toBe(at);
      logged.add(`${change.kind}:${change.id}`);
      seen.set(change.kind, (seen.get(change.kind) ?? 0) + 1);
    }
    const changed = new Set(
      [...after.keys(), ...before.keys()].filter((k) => before.get(k) !== after.get(k)),
    );
    expect([...changed].sort(), `changes served at ${nextAt}`).toEqual([...logged].sort());
  }
  // Every kind but wallets (which never change) was seen changing.
  expect([...seen.keys()].sort()).toEqual(TRUTH_KINDS.filter((k) => k !== 'member.wallets').sort());
  expect(steps).toBeLessThan(150);
});
