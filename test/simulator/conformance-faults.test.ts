/* eslint-disable @typescript-eslint/no-unsafe-return --
   conformance tests probe the raw JSON exactly as the wire shows it. */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { formatSimulatorBanner, type RunningSimulator } from '../../src/simulator/index.js';
import { ANCHOR, call, startFixedSimulator } from './sim-fixture.js';

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await startFixedSimulator();
});
afterAll(() => sim.close());
beforeEach(() => sim.control.faults.reset());

const feed = (query: string) => call(sim, `/check_ins${query}`, { apiKey: sim.credentials.apiKey });

describe('fault injection', () => {
  test('rate limit: per-credential rps answers 429 with an integer Retry-After', async () => {
    sim.control.faults.set({ rateLimitRps: 1 });
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 10; i++) {
      const res = await call(sim, '/restaurants', { apiKey: sim.credentials.apiKey });
      statuses.push(res.status);
      if (res.status === 429) {
        retryAfter = res.headers.get('retry-after');
        expect(res.json.error.type).toBe('rate_limit_error');
      }
    }
    expect(statuses).toContain(429);
    expect(retryAfter).toMatch(/^\d+$/);
    // Another credential has its own bucket.
    expect((await call(sim, '/restaurants', { apiKey: sim.credentials.apiKeyNoScopes })).status).toBe(200);
  });

  test('5xx: a fraction of answers are 5xx with HTML bodies', async () => {
    sim.control.faults.set({ serverErrorRate: 1 });
    const res = await call(sim, '/restaurants', { apiKey: sim.credentials.apiKey });
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.text).toMatch(/<html/i);
    sim.control.faults.set({ serverErrorRate: 0 });
    expect((await call(sim, '/restaurants', { apiKey: sim.credentials.apiKey })).status).toBe(200);
  });

  test('latency: the setting is applied and reported (no timing assertion)', async () => {
    expect(sim.control.faults.set({ latencyMs: 5 }).latencyMs).toBe(5);
    expect((await call(sim, '/restaurants', { apiKey: sim.credentials.apiKey })).status).toBe(200);
  });

  test('truncated body: the next N answers are 200 with the JSON cut in half', async () => {
    const full = (await call(sim, '/restaurants', { apiKey: sim.credentials.apiKey })).text;
    sim.control.faults.set({ truncateNext: 2 });
    const first = await call(sim, '/restaurants', { apiKey: sim.credentials.apiKey });
    const second = await call(sim, '/restaurants', { apiKey: sim.credentials.apiKey });
    const third = await call(sim, '/restaurants', { apiKey: sim.credentials.apiKey });
    for (const cut of [first, second]) {
      expect(cut.status).toBe(200);
      expect(cut.text).toBe(full.slice(0, Math.floor(full.length / 2)));
      expect(() => JSON.parse(cut.text)).toThrow();
    }
    expect(third.text).toBe(full);
  });

  test('malformed records: the next N feed pages carry a bad id and a record without created_at', async () => {
    sim.control.faults.set({ malformedNext: 1 });
    const bad = await feed('?page_size=5');
    expect(bad.json.check_ins[0].id).toBe('not-a-uuid');
    expect(bad.json.check_ins[1].created_at).toBeUndefined();
    const good = await feed('?page_size=5');
    expect(good.json.check_ins.every((c: any) => typeof c.created_at === 'string')).toBe(true);
  });

  test('page shift: N newer rows are inserted inside the range before page >= 1, so rows shift down by N', async () => {
    const range = '?created_after=2025-02-26T00:00:00Z&created_before=2025-02-27T00:00:00Z&page_size=10';
    const page0 = await feed(range);
    const expectedPage1 = await feed(`${range}&page=1`);
    sim.control.faults.set({ shiftNextPageBy: 3 });
    const shifted = await feed(`${range}&page=1`);
    expect(shifted.json.pagination.total_count).toBe(page0.json.pagination.total_count + 3);
    // The last 3 rows of the old page 0 now open page 1.
    expect(shifted.json.check_ins.slice(0, 3).map((c: any) => c.id)).toEqual(
      page0.json.check_ins.slice(7).map((c: any) => c.id),
    );
    expect(shifted.json.check_ins[3].id).toBe(expectedPage1.json.check_ins[0].id);
    const newPage0 = await feed(range);
    const newest = Date.parse(page0.json.check_ins[0].created_at);
    for (const c of newPage0.json.check_ins.slice(0, 3)) {
      expect(Date.parse(c.created_at)).toBeGreaterThanOrEqual(newest);
      expect(Date.parse(c.created_at)).toBeLessThan(Date.parse('2025-02-27T00:00:00Z'));
    }
    // One-shot: the next page-1 request is not shifted again.
    expect((await feed(`${range}&page=1`)).json.pagination.total_count).toBe(
      page0.json.pagination.total_count + 3,
    );
  });

  test('request log: method, path, query, status, credential kind and time can be read back and cleared', async () => {
    sim.control.requests.clear();
    await feed('?page_size=1');
    await call(sim, '/users/me');
    const log = sim.control.requests.list();
    expect(log).toHaveLength(2);
    expect(log[0]).toEqual({
      method: 'GET',
      path: '/v1/check_ins',
      query: { page_size: '1' },
      status: 200,
      credential: 'api_key',
      at: ANCHOR.toISOString(),
    });
    expect(log[1]).toMatchObject({ path: '/v1/users/me', status: 401, credential: 'none' });
    expect(JSON.stringify(log)).not.toContain(sim.credentials.apiKey);
    sim.control.requests.clear();
    expect(sim.control.requests.list()).toEqual([]);
  });
});

describe('control surface', () => {
  test('clock: advance and set move the simulator clock; created_at of new check-ins uses it', async () => {
    sim.control.clock.advance(3_600_000);
    try {
      const [id] = sim.control.checkIns.addNow(1);
      const res = await call(sim, `/check_ins/${id}`, { apiKey: sim.credentials.apiKey });
      expect(res.json.created_at).toBe(new Date(ANCHOR.getTime() + 3_600_000).toISOString());
      expect(res.json.ended_at).toBeNull();
    } finally {
      sim.control.clock.set(ANCHOR);
    }
    expect(sim.control.clock.now().toISOString()).toBe(ANCHOR.toISOString());
  });

  test('late arrivals: rows appear inside a past window and its total_count moves', async () => {
    const window = '?created_after=2025-02-25T10:00:00Z&created_before=2025-02-25T11:00:00Z&page_size=1';
    const before = (await feed(window)).json.pagination.total_count;
    sim.control.checkIns.addLate(4, {
      from: new Date('2025-02-25T10:15:00Z'),
      to: new Date('2025-02-25T10:45:00Z'),
    });
    expect((await feed(window)).json.pagination.total_count).toBe(before + 4);
  });

  test('end ongoing visits: ended_at goes from null to a time', async () => {
    const [id] = sim.control.checkIns.addNow(1);
    expect(sim.control.checkIns.ongoingCount()).toBeGreaterThan(0);
    sim.control.checkIns.endOngoing();
    expect(sim.control.checkIns.ongoingCount()).toBe(0);
    const res = await call(sim, `/check_ins/${id}`, { apiKey: sim.credentials.apiKey });
    expect(res.json.ended_at).toBe(ANCHOR.toISOString());
  });

  test('restaurants: change, add and remove are visible on /restaurants', async () => {
    const list = async () =>
      (await call(sim, '/restaurants?page_size=500', { apiKey: sim.credentials.apiKey })).json.restaurants;
    const [first] = await list();
    sim.control.restaurants.update(first.id, { name: 'Renamed Place' });
    const renamed = (await list()).find((r: any) => r.id === first.id);
    expect(renamed.name).toBe('Renamed Place');
    expect(renamed.updated_at).toBeGreaterThan(first.updated_at);
    const { id } = sim.control.restaurants.add({ name: 'Brand New', cohort: 'qsr' });
    expect((await list()).map((r: any) => r.id)).toContain(id);
    sim.control.restaurants.remove(id);
    expect((await list()).map((r: any) => r.id)).not.toContain(id);
  });

  test('locations: removed locations give 404 on /locations/{id}', async () => {
    const r = sim.control.restaurants.list()[0]!;
    const { id } = sim.control.locations.add(r['id'] as string, {});
    expect((await call(sim, `/locations/${id}`, { apiKey: sim.credentials.apiKey })).status).toBe(200);
    sim.control.locations.remove(id);
    expect((await call(sim, `/locations/${id}`, { apiKey: sim.credentials.apiKey })).status).toBe(404);
  });

  test('admin HTTP: protected by the admin token and drives the same control', async () => {
    const admin = sim.baseUrl.replace(/\/v1$/, '/_admin');
    expect((await fetch(`${admin}/state`)).status).toBe(401);
    const headers = {
      authorization: `Bearer ${sim.credentials.adminToken}`,
      'content-type': 'application/json',
    };
    const created = await fetch(`${admin}/intents`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ amount: '42' }),
    });
    const intent = (await created.json()) as any;
    const paid = await fetch(`${admin}/intents/${intent.id}/pay`, { method: 'POST', headers });
    expect(((await paid.json()) as any).status).toBe('paid');
    const faults = await fetch(`${admin}/faults`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ truncateNext: 1 }),
    });
    expect(((await faults.json()) as any).truncateNext).toBe(1);
    await fetch(`${admin}/faults`, { method: 'DELETE', headers });
    const clock = await fetch(`${admin}/clock`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ advanceMs: 1000 }),
    });
    expect(((await clock.json()) as any).now).toBe(new Date(ANCHOR.getTime() + 1000).toISOString());
    await fetch(`${admin}/clock`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ set: ANCHOR.toISOString() }),
    });
    const revoke = await fetch(`${admin}/api_keys/revoke`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ key: sim.control.credentials.mintApiKey([]) }),
    });
    expect(((await revoke.json()) as any).revoked).toBe(true);
  });

  test('live mode: new check-ins arrive at the clock now and ongoing visits end over time', () => {
    const count = sim.control.checkIns.count();
    sim.control.checkIns.addNow(2);
    const ongoing = sim.control.checkIns.ongoingCount();
    sim.control.live.tick(); // baseline
    sim.control.clock.advance(4 * 3_600_000);
    try {
      const { arrived, ended } = sim.control.live.tick();
      expect(arrived).toBeGreaterThan(0);
      expect(ended).toBeGreaterThanOrEqual(2);
      expect(sim.control.checkIns.count()).toBe(count + 2 + arrived);
      expect(sim.control.checkIns.ongoingCount()).toBeLessThan(ongoing + arrived);
    } finally {
      sim.control.clock.set(ANCHOR);
    }
  });

  test('banner: base URL, API key, OAuth client, refresh token, admin token and env lines', () => {
    const banner = formatSimulatorBanner(sim);
    for (const value of [
      sim.baseUrl,
      sim.credentials.apiKey,
      sim.credentials.clientId,
      sim.credentials.clientSecret,
      sim.credentials.refreshToken,
      sim.credentials.adminToken,
    ])
      expect(banner).toContain(value);
    expect(banner).toContain(`SVC_API_BASE_URL=${sim.baseUrl}\n`);
    expect(sim.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });
});
