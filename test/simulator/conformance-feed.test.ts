/* eslint-disable @typescript-eslint/no-unsafe-return --
   conformance tests probe the raw JSON exactly as the wire shows it. */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { ANCHOR, call, callWithoutUserAgent, ISO, startFixedSimulator, UUID } from './sim-fixture.js';

let sim: RunningSimulator;
let key: string;
beforeAll(async () => {
  sim = await startFixedSimulator();
  key = sim.credentials.apiKey;
});
afterAll(() => sim.close());

const feed = (query: string) => call(sim, `/check_ins${query}`, { apiKey: key });
const times = (body: any): number[] => body.check_ins.map((c: any) => Date.parse(c.created_at));

describe('discovery', () => {
  test('restaurants: paginated list with epoch-second created_at/updated_at', async () => {
    const res = await call(sim, '/restaurants?page=1&page_size=5', { apiKey: key });
    expect(res.status).toBe(200);
    expect(res.json.restaurants).toHaveLength(5);
    expect(res.json.pagination).toEqual({
      total_count: 24,
      total_pages: 5,
      current_page: 1,
      next_page: 2,
      page_size: 5,
    });
    const r = res.json.restaurants[0];
    expect(Number.isInteger(r.created_at)).toBe(true);
    expect(Number.isInteger(r.updated_at)).toBe(true);
    expect(r.created_at).toBeLessThan(ANCHOR.getTime() / 1000);
    expect(r).toMatchObject({ object: 'restaurant', id: expect.stringMatching(UUID) });
    expect(['qsr', 'fsr']).toContain(r.cohort);
    expect(Object.keys(r.asset).sort()).toEqual(['full_3x', 'preview_1x', 'web_2x']);
  });

  test('restaurants: both cohorts qsr and fsr exist', async () => {
    const res = await call(sim, '/restaurants?page_size=100', { apiKey: key });
    expect(new Set(res.json.restaurants.map((r: any) => r.cohort))).toEqual(new Set(['qsr', 'fsr']));
  });

  test('pagination: next_page is null on the last page', async () => {
    const res = await call(sim, '/restaurants?page=4&page_size=5', { apiKey: key });
    expect(res.json.restaurants).toHaveLength(4);
    expect(res.json.pagination.next_page).toBeNull();
  });

  test('pagination: page_size defaults to 50 and page to 0', async () => {
    const res = await feed('');
    expect(res.json.pagination).toMatchObject({ current_page: 0, page_size: 50 });
    expect(res.json.check_ins).toHaveLength(50);
  });

  test('pagination: page_size above 500 is clamped and the wrapper reports 500', async () => {
    const res = await feed('?page_size=5000');
    expect(res.json.check_ins).toHaveLength(500);
    expect(res.json.pagination.page_size).toBe(500);
  });

  test('locations/{id}: reduced form with embedded restaurant and neighborhood', async () => {
    const locationId = (await feed('?page_size=1')).json.check_ins[0].location.id;
    const res = await call(sim, `/locations/${locationId}`, { apiKey: key });
    expect(res.status).toBe(200);
    expect(Object.keys(res.json).sort()).toEqual(
      [
        'address',
        'coordinate',
        'id',
        'is_club',
        'name',
        'neighborhood',
        'object',
        'payments_enabled',
        'restaurant',
        'time_zone',
      ].sort(),
    );
    expect(res.json.neighborhood).toMatchObject({ object: 'neighborhood', id: expect.stringMatching(UUID) });
    expect(res.json.restaurant.object).toBe('restaurant');
  });

  test('locations/{id}/open_hours: not paginated, weekly periods', async () => {
    const locationId = (await feed('?page_size=1')).json.check_ins[0].location.id;
    const res = await call(sim, `/locations/${locationId}/open_hours`, { apiKey: key });
    expect(res.status).toBe(200);
    expect(res.json.pagination).toBeUndefined();
    expect(res.json.open_hours.length).toBeGreaterThan(0);
    expect(res.json.open_hours[0]).toMatchObject({
      day_of_week: expect.any(Number),
      opens_at: expect.stringMatching(/^\d\d:\d\d$/),
    });
  });

  test('locations span several regions and IANA time zones', async () => {
    const res = await feed('?page_size=500');
    const zones = new Set(res.json.check_ins.map((c: any) => c.location.time_zone));
    const regions = new Set(res.json.check_ins.map((c: any) => c.location.neighborhood.region));
    expect(zones.size).toBeGreaterThanOrEqual(3);
    expect(regions.size).toBeGreaterThanOrEqual(3);
  });
});

describe('check-in feed', () => {
  test('check-in feed: a bare request returns the full paginated set', async () => {
    const res = await feed('');
    expect(res.status).toBe(200);
    expect(res.json.pagination.total_count).toBe(sim.control.checkIns.count());
  });

  test('check-in feed: newest first', async () => {
    const t = times((await feed('?page_size=200')).json);
    for (let i = 1; i < t.length; i++) expect(t[i]).toBeLessThanOrEqual(t[i - 1]!);
  });

  test('check-in feed: full location form with embedded restaurant (ISO timestamps) and neighborhood', async () => {
    const c = (await feed('?page_size=1')).json.check_ins[0];
    expect(c).toMatchObject({
      object: 'check_in',
      id: expect.stringMatching(UUID),
      created_at: expect.stringMatching(ISO),
    });
    expect(c.user).toBeUndefined();
    expect(c.location).toMatchObject({
      object: 'location',
      slug: expect.any(String),
      reservations_enabled: expect.any(Boolean),
    });
    expect(c.location.restaurant.created_at).toMatch(ISO);
    expect(c.location.neighborhood.object).toBe('neighborhood');
  });

  test('check-in feed: the most recent visits are ongoing (ended_at null)', async () => {
    const c = (await feed('?page_size=1')).json.check_ins[0];
    expect(c.ended_at).toBeNull();
    const old = (
      await feed(`?created_before=${new Date(ANCHOR.getTime() - 86_400_000).toISOString()}&page_size=1`)
    ).json.check_ins[0];
    expect(old.ended_at).toMatch(ISO);
  });

  test('check-in feed: visits follow a daily rhythm with lunch and dinner peaks', async () => {
    // New York venues, one local day: dinner hour busier than 4 a.m.
    const res = await feed(
      '?page_size=500&created_after=2025-02-25T00:00:00Z&created_before=2025-02-28T00:00:00Z',
    );
    const total = res.json.pagination.total_count;
    const count = async (from: string, to: string) =>
      (await feed(`?created_after=${from}&created_before=${to}&page_size=1`)).json.pagination
        .total_count as number;
    // 00:00 UTC = 19:00 New York / 16:00 Los Angeles; 09:00 UTC = 4 a.m. New York / 1 a.m. LA.
    const evening = await count('2025-02-27T00:00:00Z', '2025-02-27T01:00:00Z');
    const night = await count('2025-02-27T09:00:00Z', '2025-02-27T10:00:00Z');
    expect(total).toBeGreaterThan(0);
    expect(evening).toBeGreaterThan(night * 3);
  });

  test('check-in feed: created_after is inclusive', async () => {
    const newest = (await feed('?page_size=1')).json.check_ins[0];
    const res = await feed(`?created_after=${newest.created_at}&page_size=500`);
    expect(res.json.check_ins.map((c: any) => c.id)).toContain(newest.id);
    expect(times(res.json).every((t) => t >= Date.parse(newest.created_at))).toBe(true);
  });

  test('check-in feed: created_before is exclusive', async () => {
    const newest = (await feed('?page_size=1')).json.check_ins[0];
    const res = await feed(`?created_before=${newest.created_at}&page_size=50`);
    expect(res.json.check_ins.map((c: any) => c.id)).not.toContain(newest.id);
    expect(times(res.json).every((t) => t < Date.parse(newest.created_at))).toBe(true);
  });

  test('check-in feed: window counts add up (after inclusive + before exclusive partition the set)', async () => {
    const cut = '2025-02-27T12:00:00.000Z';
    const before = (await feed(`?created_before=${cut}&page_size=1`)).json.pagination.total_count;
    const after = (await feed(`?created_after=${cut}&page_size=1`)).json.pagination.total_count;
    expect(before + after).toBe(sim.control.checkIns.count());
  });

  test('check-in feed: filters combine with AND', async () => {
    const sample = (await feed('?page_size=1')).json.check_ins[0];
    const restaurant = sample.location.restaurant.id;
    const res = await feed(`?restaurant=${restaurant}&created_after=2025-02-27T00:00:00Z&page_size=500`);
    expect(res.json.check_ins.length).toBeGreaterThan(0);
    for (const c of res.json.check_ins) {
      expect(c.location.restaurant.id).toBe(restaurant);
      expect(Date.parse(c.created_at)).toBeGreaterThanOrEqual(Date.parse('2025-02-27T00:00:00Z'));
    }
  });

  test('check-in feed: restaurant filter covers every location of the restaurant', async () => {
    const all = (await feed('?page_size=500')).json.check_ins;
    const restaurant = all[0].location.restaurant.id;
    const res = await feed(`?restaurant=${restaurant}&page_size=500`);
    const locations = new Set<string>(res.json.check_ins.map((c: any) => c.location.id));
    const byLocation = await Promise.all(
      [...locations].map(
        async (l) => (await feed(`?location=${l}&page_size=1`)).json.pagination.total_count as number,
      ),
    );
    expect(byLocation.reduce((a, b) => a + b, 0)).toBe(res.json.pagination.total_count);
  });

  test('check-in feed: location filter returns only that location', async () => {
    const location = (await feed('?page_size=1')).json.check_ins[0].location.id;
    const res = await feed(`?location=${location}&page_size=100`);
    expect(res.json.check_ins.every((c: any) => c.location.id === location)).toBe(true);
  });

  test('check-in feed: a well-formed UUID matching nothing gives 200, empty list, total_count 0', async () => {
    const res = await feed('?restaurant=00000000-0000-4000-8000-000000000000');
    expect(res.status).toBe(200);
    expect(res.json.check_ins).toEqual([]);
    expect(res.json.pagination.total_count).toBe(0);
  });

  test('check-in feed: epoch-second timestamps give 400 invalid_parameter (envelope A)', async () => {
    const res = await feed('?created_after=1740000000');
    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      error: {
        type: 'invalid_request_error',
        code: 'invalid_parameter',
        message: expect.any(String),
        param: null,
      },
    });
  });

  test('check-in feed: a malformed UUID gives 400 invalid_parameter', async () => {
    const res = await feed('?location=not-a-uuid');
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('invalid_parameter');
  });

  test('check-in feed: unknown query parameters are ignored (misspelled filter = unfiltered set)', async () => {
    const res = await feed('?restaurant_id=00000000-0000-4000-8000-000000000000&colour=blue');
    expect(res.status).toBe(200);
    expect(res.json.pagination.total_count).toBe(sim.control.checkIns.count());
  });

  test('check-in feed: user and user_id filters are ignored', async () => {
    const member = sim.control.members.defaultMemberId;
    const res = await feed(`?user=${member}&user_id=${member}`);
    expect(res.json.pagination.total_count).toBe(sim.control.checkIns.count());
  });

  test('check-in feed: an absent User-Agent gives 403 with an HTML body', async () => {
    const res = await callWithoutUserAgent(sim, '/check_ins', key, false);
    expect(res.status).toBe(403);
    expect(res.contentType).toMatch(/text\/html/);
    expect(res.body).toMatch(/<html/i);
  });

  test('check-in feed: an empty User-Agent gives 403 with an HTML body', async () => {
    const res = await callWithoutUserAgent(sim, '/check_ins', key, true);
    expect(res.status).toBe(403);
    expect(res.body).toMatch(/<html/i);
  });

  test('check_ins/{id}: one check-in with the short location form', async () => {
    const first = (await feed('?page_size=1')).json.check_ins[0];
    const res = await call(sim, `/check_ins/${first.id}`, { apiKey: key });
    expect(res.status).toBe(200);
    expect(res.json.id).toBe(first.id);
    expect(res.json.created_at).toBe(first.created_at);
    expect(Object.keys(res.json.location).sort()).toEqual([
      'id',
      'name',
      'neighborhood',
      'object',
      'restaurant',
    ]);
  });

  test('check_ins/{id}: an unknown id gives 404 resource_not_found (envelope A)', async () => {
    const res = await call(sim, '/check_ins/00000000-0000-4000-8000-000000000000', { apiKey: key });
    expect(res.status).toBe(404);
    expect(res.json.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'resource_not_found',
      param: null,
    });
  });
});

describe('routing 404 (envelope C)', () => {
  const expectEnvelopeC = (res: { status: number; json: any }) => {
    expect(res.status).toBe(404);
    expect(res.json).toEqual({
      status: 404,
      display_message: expect.any(String),
      message: expect.any(String),
      error: 'EndpointNotFoundException',
      error_code: 'internal0007',
      timestamp: expect.stringMatching(ISO),
    });
  };
  test('envelope C: unknown path', async () =>
    expectEnvelopeC(await call(sim, '/no_such_thing', { apiKey: key })));
  test('envelope C: legacy /users/{id}/* routes no longer exist', async () =>
    expectEnvelopeC(
      await call(sim, `/users/${sim.control.members.defaultMemberId}/check_ins`, { apiKey: key }),
    ));
  test('envelope C: wrong version prefix', async () =>
    expectEnvelopeC(await call(sim, sim.baseUrl.replace(/\/v1$/, '/v2/check_ins'), { apiKey: key })));
});
