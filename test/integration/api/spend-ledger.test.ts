import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSpendLedger } from '../../../src/api/spend-ledger.js';
import { createTestRedis } from '../../helpers/redis.js';
import { createApiHarness, type ApiHarness } from './harness.js';

// The spend ledger (docs/rate-limit.md, "One budget"): every request a client sends, retries
// included, is counted against its route family's stream, in Redis, so that the requests of
// several processes add up.

let h: ApiHarness;

beforeAll(async () => {
  h = await createApiHarness('api_spend_ledger');
});
afterAll(async () => {
  await h?.close();
});

describe('the spend ledger', () => {
  it("counts every request of two processes against its route family's stream, retries included", async () => {
    const first = await h.client();
    const second = await h.client();
    h.sim.control.requests.clear();
    h.sim.control.faults.set({ truncateNext: 1 });
    await first.api.getBalance(); // a truncated answer, then a retry: two requests
    for await (const page of first.api.checkInPages({
      createdAfter: new Date(Date.now() - 86_400_000),
      createdBefore: new Date(),
    })) {
      expect(page.records.length).toBeGreaterThanOrEqual(0);
      break;
    }
    for await (const page of second.api.restaurantPages()) {
      expect(page.records.length).toBeGreaterThan(0);
      break;
    }
    const intent = h.sim.control.intents.list()[0]!;
    await second.api.getPaymentIntent(intent.id); // the by-id read that raises paid alerts
    await first.api.getPaymentIntent(intent.id);

    const reader = createTestRedis();
    try {
      const { spent: spend } = await createSpendLedger({ redis: reader, prefix: h.prefix }).spentOver(
        3_600_000,
      );
      const sent = h.sim.control.requests.list();
      const on = (prefix: string) => sent.filter((r) => r.path.startsWith(`/v1${prefix}`)).length;
      expect(on('/balance')).toBe(2);
      expect(spend).toMatchObject({
        balance: 2,
        checkins: on('/check_ins'),
        restaurants: on('/restaurants'),
        payment_intents: 2,
        members: 0,
        challenges: 0,
        locations: 0,
      });
      // Each process refreshed its access token once before its first bearer request.
      expect(spend.oauth).toBeGreaterThanOrEqual(1);
    } finally {
      reader.disconnect();
    }
  });

  it('reads the minutes the window touches, and says how long they cover', async () => {
    let now = Date.parse('2026-11-26T10:00:30Z');
    const redis = createTestRedis();
    try {
      const ledger = createSpendLedger({ redis, prefix: `${h.prefix}:window`, nowMs: () => now });
      await ledger.record('members', 5);
      now += 10 * 60_000;
      await ledger.record('members', 3);
      await ledger.record('checkins');
      // 10:10:30: the last 30 s lie in the current minute only; the last minute touches 10:09 too.
      expect(await ledger.spentOver(30_000)).toEqual({
        spent: expect.objectContaining({ members: 3, checkins: 1 }) as unknown,
        spanMs: 30_000,
      });
      expect(await ledger.spentOver(60_000)).toMatchObject({ spanMs: 90_000 });
      expect((await ledger.spentOver(9 * 60_000)).spent).toMatchObject({ members: 3, checkins: 1 });
      expect(await ledger.spentOver(10 * 60_000)).toEqual({
        spent: expect.objectContaining({ members: 8, checkins: 1 }) as unknown,
        spanMs: 630_000,
      });
      const ttl = await redis.pttl(`${h.prefix}:window:budget:spent:${Math.floor(now / 60_000)}`);
      expect(ttl).toBeGreaterThan(3_600_000);
    } finally {
      redis.disconnect();
    }
  });
});
