/* eslint-disable @typescript-eslint/no-unsafe-return --
   conformance tests probe the raw JSON exactly as the wire shows it. */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { ANCHOR, call, ISO, startFixedSimulator, UUID } from './sim-fixture.js';

let sim: RunningSimulator;
let bearer: string;
beforeAll(async () => {
  sim = await startFixedSimulator();
  bearer = await sim.control.credentials.accessToken();
});
afterAll(() => sim.close());

const me = (path: string, token = bearer) => call(sim, `/users/me${path}`, { bearer: token });
const TWO_POW_64 = 2n ** 64n;

describe('member routes', () => {
  test('users/me: profile of the token subject', async () => {
    const res = await me('');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      id: sim.control.members.defaultMemberId,
      object: 'user',
      account_status: 'ok',
    });
    expect(res.json.created_at).toMatch(ISO);
  });

  test('users/me/status: year_start/year_end are epoch seconds; tier may contain a newline; usd lowercase', async () => {
    const res = await me('/status');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      object: 'status',
      state: 'active',
      user: sim.control.members.defaultMemberId,
    });
    expect(Number.isInteger(res.json.year_start)).toBe(true);
    expect(res.json.year_end).toBeGreaterThan(res.json.year_start);
    expect(res.json.started_at).toMatch(ISO);
    expect(res.json.progress.spend.currency).toBe('usd');
    expect(Number.isInteger(res.json.progress.spend.value)).toBe(true);
    expect(typeof res.json.progress.token_deposit.value).toBe('string');
    const tiers = await Promise.all(
      sim.control.members
        .list()
        .filter((m) => m.hasActiveStatus)
        .map(
          async (m) =>
            (await me('/status', await sim.control.credentials.accessToken({ memberId: m.id }))).json
              .tier as string,
        ),
    );
    expect(tiers.some((t) => t.includes('\n'))).toBe(true);
  });

  test('users/me/status: level is an integer from 1 to 7 for every member', async () => {
    for (const member of sim.control.members.list()) {
      const token = await sim.control.credentials.accessToken({ memberId: member.id });
      const res = await me('/status', token);
      if (res.status === 404) continue; // no active status record
      expect(Number.isInteger(res.json.level)).toBe(true);
      expect(res.json.level).toBeGreaterThanOrEqual(1);
      expect(res.json.level).toBeLessThanOrEqual(7);
    }
  });

  test('users/me/status: 404 resource_not_found when the member has no active status', async () => {
    const member = sim.control.members.list().find((m) => !m.hasActiveStatus)!;
    const res = await me('/status', await sim.control.credentials.accessToken({ memberId: member.id }));
    expect(res.status).toBe(404);
    expect(res.json.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'resource_not_found',
      param: null,
    });
  });

  test('users/me/wallets: one MEMBERSHIP and one SPENDING wallet, not paginated', async () => {
    const res = await me('/wallets');
    expect(res.json.pagination).toBeUndefined();
    expect(res.json.wallets.map((w: any) => w.wallet_type).sort()).toEqual(['MEMBERSHIP', 'SPENDING']);
    expect(res.json.wallets[0].object).toBe('user_wallet');
  });

  test('users/me/tags: lowercase industry tag; empty list when none', async () => {
    const res = await me('/tags');
    expect(res.json.tags[0]).toMatchObject({ object: 'user_tag', type: 'industry' });
    const other = sim.control.members.list()[1]!;
    const none = await me('/tags', await sim.control.credentials.accessToken({ memberId: other.id }));
    expect(none.json).toEqual({ tags: [] });
  });

  test('users/me/check_ins: paginated, newest first, short location form', async () => {
    const res = await me('/check_ins?page_size=10');
    expect(res.json.pagination).toMatchObject({ current_page: 0, page_size: 10 });
    const t = res.json.check_ins.map((c: any) => Date.parse(c.created_at));
    for (let i = 1; i < t.length; i++) expect(t[i]).toBeLessThanOrEqual(t[i - 1]);
    expect(Object.keys(res.json.check_ins[0].location).sort()).toEqual([
      'id',
      'name',
      'neighborhood',
      'object',
      'restaurant',
    ]);
  });

  test('users/me/memberships: per-restaurant check-in total is the sum over the restaurant filter', async () => {
    const all = await me('/memberships?page_size=1000&sort=desc&order_by=check_in_count');
    expect(all.json.pagination.page_size).toBe(1000); // uncapped
    const first = all.json.memberships[0];
    expect(first.membership_tier.object).toBe('membership_tier');
    const filtered = await me(`/memberships?restaurant=${first.restaurant_id}`);
    expect(filtered.json.memberships.every((m: any) => m.restaurant_id === first.restaurant_id)).toBe(true);
    const history = await me('/check_ins?page_size=1000');
    const atRestaurant = history.json.check_ins.filter(
      (c: any) => c.location.restaurant.id === first.restaurant_id,
    ).length;
    expect(filtered.json.memberships.reduce((s: number, m: any) => s + m.check_in_count, 0)).toBe(
      atRestaurant,
    );
  });

  test('users/me/*: each route checks its own scope', async () => {
    const profileOnly = await sim.control.credentials.accessToken({ scopes: ['read:profile'] });
    expect((await me('', profileOnly)).status).toBe(200);
    for (const path of ['/wallets', '/tags', '/check_ins', '/memberships'])
      expect((await me(path, profileOnly)).status).toBe(403);
  });
});

describe('challenges and balance', () => {
  const key = () => sim.credentials.apiKey;
  const restaurants = async () =>
    (await call(sim, '/restaurants?page_size=100', { apiKey: key() })).json.restaurants;

  test('challenges: restaurant is required (400 invalid_parameter)', async () => {
    const res = await call(sim, '/challenges', { apiKey: key() });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('invalid_parameter');
  });

  test('challenges: all four types exist with their thresholds; rewards are big-integer strings beyond 2^64', async () => {
    const seen = new Map<string, any>();
    let huge = false;
    for (const r of await restaurants()) {
      const res = await call(sim, `/challenges?restaurant=${r.id}`, { apiKey: key() });
      for (const c of res.json.challenges) {
        seen.set(c.type, c);
        expect(c.token_reward.value).toMatch(/^\d+$/);
        if (BigInt(c.token_reward.value) > TWO_POW_64) huge = true;
      }
    }
    expect([...seen.keys()].sort()).toEqual(['DINES', 'PASSPORT', 'PAYMENT', 'REFERRALS']);
    expect(huge).toBe(true);
    expect(seen.get('PAYMENT').threshold.spend_threshold.value).toMatch(/^\d+$/);
    expect(Number.isInteger(seen.get('DINES').threshold.dine_threshold)).toBe(true);
    expect(Number.isInteger(seen.get('REFERRALS').threshold.referral_threshold)).toBe(true);
    expect(Number.isInteger(seen.get('PASSPORT').threshold.location_threshold)).toBe(true);
  });

  test('challenges: location narrows to challenges that apply at that location', async () => {
    const [r] = await restaurants();
    const locations = (sim.control.locations.list() as any[]).filter((l) => l.restaurant.id === r.id);
    const here = locations[0].id;
    const other = sim.control.locations.add(r.id, { name: 'Narrowing test venue' }).id;
    const { id } = sim.control.challenges.add(r.id, { type: 'DINES', locationIds: [here] });
    const ids = async (location: string) =>
      (
        await call(sim, `/challenges?restaurant=${r.id}&location=${location}`, { apiKey: key() })
      ).json.challenges.map((c: any) => c.id);
    expect(await ids(here)).toContain(id);
    expect(await ids(other)).not.toContain(id);
    const all = (await call(sim, `/challenges?restaurant=${r.id}&page_size=500`, { apiKey: key() })).json
      .challenges;
    expect(all.map((c: any) => c.id)).toContain(id);
    expect((await ids(other)).length).toBeLessThan(all.length);
  });

  test('balance: account_balance of the app wallet, currency case differs from challenges', async () => {
    const res = await call(sim, '/balance', { apiKey: key() });
    expect(res.json).toMatchObject({
      id: sim.credentials.appWalletId,
      object: 'account_balance',
      owner_id: sim.credentials.merchantId,
      owner_type: 'svc_merchant',
    });
    expect(res.json.balance.value).toMatch(/^\d+$/);
    expect(res.json.balance.currency).toBe('svc');
    expect(Number.isInteger(res.json.balance_usd.value)).toBe(true);
  });
});

describe('payment intents', () => {
  const create = (body: Record<string, unknown>) =>
    call(sim, '/payment_intents', {
      bearer,
      method: 'POST',
      body: { svc_merchant_id: sim.credentials.merchantId, ...body },
    });
  const confirm = (id: string, userId = sim.control.members.defaultMemberId) =>
    call(sim, `/payment_intents/${id}/confirm`, { bearer, method: 'POST', body: { user_id: userId } });
  const cancel = (id: string) => call(sim, `/payment_intents/${id}/cancel`, { bearer, method: 'POST' });

  test('create: requires svc_merchant_id', async () => {
    const res = await call(sim, '/payment_intents', {
      bearer,
      method: 'POST',
      body: { amount: { value: '5', currency: 'SVC' } },
    });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('invalid_parameter');
  });

  test('create: reusing an idempotency_key returns the existing intent; a new key creates another', async () => {
    const a = await create({ amount: { value: '1000', currency: 'SVC' }, idempotency_key: 'order-1' });
    const b = await create({ amount: { value: '1000', currency: 'SVC' }, idempotency_key: 'order-1' });
    const c = await create({ amount: { value: '1000', currency: 'SVC' }, idempotency_key: 'order-2' });
    expect(a.status).toBe(201);
    expect(b.json.id).toBe(a.json.id);
    expect(c.json.id).not.toBe(a.json.id);
    expect(a.json).toMatchObject({
      status: 'pending',
      payee_account_balance_id: sim.credentials.appWalletId,
    });
  });

  test('list: subset form, newest first, filter by payee', async () => {
    const fresh = sim.control.intents.create({ description: 'newest' });
    const res = await call(sim, `/payment_intents?payee_account_balance_id=${sim.credentials.appWalletId}`, {
      bearer,
    });
    expect(res.json.payment_intents[0].id).toBe(fresh.id);
    expect(Object.keys(res.json.payment_intents[0]).sort()).toEqual(
      ['amount', 'created_at', 'description', 'id', 'object', 'status', 'updated_at'].sort(),
    );
    const none = await call(
      sim,
      '/payment_intents?payer_account_balance_id=00000000-0000-4000-8000-000000000000',
      { bearer },
    );
    expect(none.json.pagination.total_count).toBe(0);
  });

  test('seed data: intents in every state', async () => {
    const res = await call(sim, '/payment_intents?page_size=100', { bearer });
    expect(new Set(res.json.payment_intents.map((i: any) => i.status))).toEqual(
      new Set(['pending', 'paid', 'canceled', 'refunded']),
    );
  });

  test('get: full form with big-integer amount string', async () => {
    const intent = sim.control.intents.create({ amount: 123456789012345678901234567890n });
    const res = await call(sim, `/payment_intents/${intent.id}`, { bearer });
    expect(res.json.amount.value).toBe('123456789012345678901234567890');
    expect(res.json.id).toMatch(UUID);
    expect(res.json).toHaveProperty('refunded_at', null);
  });

  test('pending -> paid on confirm: tokens move to the merchant, paid_at set', async () => {
    const intent = sim.control.intents.create({ amount: '777' });
    const before = BigInt(sim.control.app.balance());
    const res = await confirm(intent.id);
    expect(res.status).toBe(200);
    expect(Object.keys(res.json).sort()).toEqual(['amount', 'id', 'object', 'paid_at', 'status']);
    expect(res.json).toMatchObject({ status: 'paid', paid_at: ANCHOR.toISOString() });
    expect(BigInt(sim.control.app.balance()) - before).toBe(777n);
  });

  test('pending stays pending on confirm with insufficient tokens: 400 payment0030', async () => {
    const poor = sim.control.members.list()[1]!;
    const intent = sim.control.intents.create({ payer: poor.spendingWalletId, amount: '1000000' });
    const res = await confirm(intent.id, poor.id);
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('payment0030');
    expect(sim.control.intents.get(intent.id).status).toBe('pending');
  });

  test('confirm on a not-pending intent: 400 paymentIntent0003', async () => {
    const intent = sim.control.intents.create({});
    sim.control.intents.cancel(intent.id);
    const res = await confirm(intent.id);
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('paymentIntent0003');
  });

  test('pending -> canceled on cancel; repeated cancel returns the same intent', async () => {
    const intent = sim.control.intents.create({});
    const first = await cancel(intent.id);
    expect(first.json).toMatchObject({ status: 'canceled', canceled_at: ANCHOR.toISOString() });
    expect(Object.keys(first.json).sort()).toEqual(['amount', 'canceled_at', 'id', 'object', 'status']);
    const again = await cancel(intent.id);
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
  });

  test('cancel on paid or refunded: 400 paymentIntent0003', async () => {
    const paid = sim.control.intents.create({});
    sim.control.intents.pay(paid.id);
    expect((await cancel(paid.id)).json.error.code).toBe('paymentIntent0003');
    const refunded = sim.control.intents.create({});
    sim.control.intents.pay(refunded.id);
    sim.control.intents.refund(refunded.id);
    expect((await cancel(refunded.id)).json.error.code).toBe('paymentIntent0003');
  });

  test('refund (control): reverses the full amount; status refunded', () => {
    const member = sim.control.members.list()[0]!;
    const intent = sim.control.intents.create({ amount: '500' });
    const start = BigInt(sim.control.members.list()[0]!.spendingBalance);
    sim.control.intents.pay(intent.id);
    const refunded = sim.control.intents.refund(intent.id);
    expect(refunded.status).toBe('refunded');
    expect(refunded.refunded_at).toMatch(ISO);
    expect(BigInt(sim.control.members.list().find((m) => m.id === member.id)!.spendingBalance)).toBe(start);
  });

  test('status is derived at read time: an intent past expires_at reads canceled', async () => {
    const intent = sim.control.intents.create({ expiresAtMs: ANCHOR.getTime() + 60_000 });
    expect((await call(sim, `/payment_intents/${intent.id}`, { bearer })).json.status).toBe('pending');
    sim.control.clock.advance(2 * 60_000);
    try {
      const res = await call(sim, `/payment_intents/${intent.id}`, {
        bearer: await sim.control.credentials.accessToken(),
      });
      expect(res.json).toMatchObject({ status: 'canceled', canceled_at: null });
    } finally {
      sim.control.clock.set(ANCHOR);
    }
  });

  test('unknown intent id: 404 resource_not_found (envelope A)', async () => {
    const res = await call(sim, '/payment_intents/00000000-0000-4000-8000-000000000000', { bearer });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('resource_not_found');
  });
});
