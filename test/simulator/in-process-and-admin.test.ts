import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createSimulator, startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { ANCHOR, call, callIn, refresh } from './sim-fixture.js';

const fixed = { seed: 13, anchor: ANCHOR, checkIns: 2_000, days: 5, clock: { now: () => ANCHOR } };

describe('in-process requests', () => {
  test('every kind of route answers in-process exactly as over HTTP, faults included', async () => {
    const overHttp = await startSimulator(fixed);
    const inProcess = createSimulator(fixed);
    try {
      const apiKey = overHttp.credentials.apiKey;
      expect(inProcess.credentials.apiKey).toBe(apiKey);
      const bearer = await overHttp.control.credentials.accessToken();
      const intent = overHttp.control.intents.list().find((i) => i.status === 'pending')!;
      const requests: [string, Parameters<typeof call>[2]][] = [
        ['/restaurants?page_size=3', { apiKey }],
        ['/check_ins?page_size=5&page=2', { apiKey }],
        ['/check_ins?page_size=0', { apiKey }],
        ['/challenges?restaurant=not-a-uuid', { apiKey }],
        ['/balance', { apiKey: overHttp.credentials.apiKeyNoScopes }],
        ['/users/me/memberships', { bearer }],
        ['/users/me', {}],
        ['/users/some-id/check_ins', { bearer }],
        [`/payment_intents/${intent.id}/cancel`, { bearer, method: 'POST' }],
        [`/payment_intents/${intent.id}`, { bearer }],
      ];
      for (const [path, options] of requests) {
        const viaHttp = await call(overHttp, path, options);
        const viaCall = await callIn(inProcess, path, options);
        expect(viaCall.status, path).toBe(viaHttp.status);
        expect(viaCall.text, path).toBe(viaHttp.text);
      }
      for (const sim of [overHttp.control, inProcess.control]) sim.faults.set({ truncateNext: 1 });
      const truncated = await callIn(inProcess, '/restaurants?page_size=2', { apiKey });
      expect(truncated.text).toBe((await call(overHttp, '/restaurants?page_size=2', { apiKey })).text);
      expect(truncated.json).toBeUndefined();
      // The feed's User-Agent rule holds without a socket too.
      const noAgent = await inProcess.handle({ url: '/v1/check_ins', headers: { 'x-api-key': apiKey } });
      expect(noAgent.status).toBe(403);
      expect(inProcess.control.requests.list().at(-1)).toMatchObject({ path: '/v1/check_ins', status: 403 });
    } finally {
      await overHttp.close();
      inProcess.close();
    }
  });
});

describe('admin surface for the world, simulated time and the truth', () => {
  let sim: RunningSimulator;
  const admin = (path: string, init: { method?: string; body?: unknown } = {}) =>
    call(sim, sim.baseUrl.replace(/\/v1$/, `/_admin${path}`), {
      headers: { authorization: `Bearer ${sim.credentials.adminToken}` },
      ...(init.method ? { method: init.method } : {}),
      ...(init.body === undefined ? {} : { body: init.body }),
    });

  beforeAll(async () => {
    sim = await startSimulator({
      ...fixed,
      size: { restaurants: 20, locations: 50, challenges: 40, members: 60, openIntents: 10 },
      changes: true,
    });
  });
  afterAll(() => sim.close());

  test('GET /world shows sizes and the change model; POST /world/advance applies due changes up to a time', async () => {
    const world = (await admin('/world')).json;
    expect(world.size).toEqual({
      restaurants: 20,
      locations: 50,
      challenges: 40,
      members: 60,
      openIntents: 10,
      checkIns: 2_000,
    });
    expect(world.changes.settings.statusEveryMs).toBe(7 * 86_400_000);
    expect(world.timeline.appliedUntil).toBe(ANCHOR.toISOString());

    const advanced = (await admin('/world/advance', { method: 'POST', body: { byMs: 12 * 3_600_000 } })).json;
    expect(advanced.to).toBe(new Date(ANCHOR.getTime() + 12 * 3_600_000).toISOString());
    expect(advanced.events).toBeGreaterThan(0);
    expect(advanced.changes['member.visits']).toBeGreaterThan(0);
    expect((await admin('/clock')).json.now).toBe(advanced.to);
    const back = await admin('/world/advance', { method: 'POST', body: { to: ANCHOR.toISOString() } });
    expect(back.status).toBe(400);
    expect(back.json.error).toMatch(/applied already/);
    expect((await admin('/world/advance', { method: 'POST', body: {} })).status).toBe(400);
  });

  test('GET /truth/changes pages the log; GET /truth gives a record last change; GET /truth/counts sums it', async () => {
    const since = ANCHOR.toISOString();
    const page = (await admin(`/truth/changes?since=${since}&limit=5`)).json;
    expect(page.changes).toHaveLength(5);
    expect(page.more).toBe(true);
    const all = (await admin(`/truth/changes?since=${since}&limit=100000`)).json;
    expect(all.more).toBe(false);
    const counts = (await admin(`/truth/counts?since=${since}`)).json;
    expect(Object.values(counts).reduce((a: number, b) => a + (b as number), 0)).toBe(all.changes.length);
    const last = all.changes.at(-1);
    const record = (await admin(`/truth?kind=${last.kind}&id=${last.id}`)).json;
    expect(record.lastChangedAt).toBe(last.at);
    expect(record.changeTimes.at(-1)).toBe(last.at);
    expect((await admin('/truth?kind=bogus&id=x')).status).toBe(400);
  });

  test('POST /clock sets the time scale; POST /members/refresh_tokens hands out member grants that work', async () => {
    expect((await admin('/clock', { method: 'POST', body: { timeScale: 60 } })).json.timeScale).toBe(60);
    expect((await admin('/clock', { method: 'POST', body: { timeScale: 0 } })).status).toBe(400);
    await admin('/clock', { method: 'POST', body: { timeScale: 1 } });
    const grants = (await admin('/members/refresh_tokens', { method: 'POST', body: { count: 3 } })).json
      .grants;
    expect(grants).toHaveLength(3);
    const tokens = await refresh(sim, grants[2].refreshToken);
    expect(tokens.status).toBe(200);
    expect((await call(sim, '/users/me', { bearer: tokens.json.access_token })).json.id).toBe(
      grants[2].memberId,
    );
  });

  test('POST /world/reset regenerates the world at other sizes; keys, admin token and grants of its members stay valid', async () => {
    const grant = (await admin('/members/refresh_tokens', { method: 'POST', body: { count: 1 } })).json
      .grants[0];
    const reset = await admin('/world/reset', {
      method: 'POST',
      body: { restaurants: 5, locations: 9, challenges: 6, members: 12, openIntents: 2, changes: false },
    });
    expect(reset.status).toBe(200);
    expect(reset.json.size).toMatchObject({
      restaurants: 5,
      locations: 9,
      challenges: 6,
      members: 12,
      openIntents: 2,
    });
    expect(reset.json.changes).toBeNull();
    const restaurants = await call(sim, '/restaurants', { apiKey: sim.credentials.apiKey });
    expect(restaurants.json.pagination.total_count).toBe(5);
    expect(sim.control.world.info().size.members).toBe(12);
    const tokens = await refresh(sim, grant.refreshToken);
    expect((await call(sim, '/users/me', { bearer: tokens.json.access_token })).json.id).toBe(grant.memberId);
    const bad = await admin('/world/reset', { method: 'POST', body: { restaurants: 5, locations: 2 } });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatch(/locations/);
    expect(sim.control.world.info().size.restaurants).toBe(5); // a refused reset changes nothing
  });
});
