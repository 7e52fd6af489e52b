import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import { createSpendLedger } from '../../../src/api/spend-ledger.js';
import { runPaymentIntentsPass } from '../../../src/streams/payment-intents/pass.js';
import type { StreamDeps } from '../../../src/streams/stream.js';
import { createIntentHarness, type IntentHarness } from './harness.js';

// Issue 39: paid alerts that scale with the list, not with by-id reads. A list round spans ticks (a
// tick reads the pages its budget affords, the next continues), and a payment the round shows is
// alerted from the list form at once, its full form read later within the full-form share.

// 10 rps, INTENT_POLL_SHARE 0.06: a one-tick pass (5 s) may spend 3 requests once the feed has
// consumed the rest of the limit: 1 by-id read kept for full forms (when some wait), the rest list pages.
const ENV = { SVC_RATE_LIMIT_RPS: '10', INTENT_POLL_SHARE: '0.06' };
const PAGE = { sweepPageSize: 2 };
let h: IntentHarness;
let deps: StreamDeps<PartnerApi>;

beforeAll(async () => {
  h = await createIntentHarness('list_rounds');
  deps = await h.deps({ env: ENV });
  await h.knowAppWallet();
  // Start watching with the whole limit (nothing else spent yet); close the simulator's own intents.
  await runPaymentIntentsPass(deps);
  for (const intent of h.sim.control.intents.list())
    if (intent.status === 'pending') h.sim.control.intents.cancel(intent.id);
  await runPaymentIntentsPass(deps);
});
afterAll(async () => {
  await h?.close();
});

const consumeTheLimit = async () => {
  // The feed's spend over the last minute at the whole limit: the intents keep their share alone.
  const ledger = createSpendLedger({ redis: deps.redis, prefix: deps.config.redisPrefix });
  await ledger.record('checkins', 10 * 60);
};
const alertBodies = async (ids: readonly string[]) =>
  (
    await h.database.db
      .selectFrom('rewards.alerts')
      .select(['payment_intent_id', 'payload'])
      .where('type', '=', 'payment_intent.paid')
      .where('payment_intent_id', 'in', [...ids])
      .execute()
  ).map((row) => ({ id: row.payment_intent_id, payload: row.payload as Record<string, unknown> }));

describe('list rounds across ticks, and payments alerted from the list form', () => {
  it('a round continues where the last tick stopped; every payment alerted once, the list-form ones with payer null and metadata {} until the full form is read', async () => {
    const ids = Array.from(
      { length: 10 },
      (_, i) => h.sim.control.intents.create({ description: `round ${i}`, metadata: { order: `R-${i}` } }).id,
    );
    await consumeTheLimit();
    // Discovery: the round reads 2 pages a tick, newest first, and continues across passes.
    const pages: number[] = [];
    for (let i = 0; i < 8; i++) {
      const outcome = await runPaymentIntentsPass(deps, PAGE);
      pages.push(Number(outcome.details?.['roundPage']));
      if (outcome.details?.['roundCompleted'] === true) break;
    }
    // At most 3 pages a tick (2 while full forms wait: one read kept), each tick after the last.
    expect(pages.length).toBeGreaterThanOrEqual(2);
    pages.forEach((page, i) => expect(page - (pages[i - 1] ?? 0)).toBeGreaterThanOrEqual(1));
    pages.forEach((page, i) => expect(page - (pages[i - 1] ?? 0)).toBeLessThanOrEqual(3));
    const rows = await h.database.db
      .selectFrom('rewards.payment_intents')
      .select(['id', 'payer_account_balance_id'])
      .where('id', 'in', ids)
      .execute();
    expect(rows).toHaveLength(10);

    // The two oldest, on the round's last page: one read by id first (the reserve affords one), the
    // other alerted from the list form, payer and metadata not read yet.
    const paid = ids.slice(0, 2);
    for (const id of paid) h.sim.control.intents.pay(id);
    let alerted: Awaited<ReturnType<typeof alertBodies>> = [];
    for (let i = 0; i < 12 && alerted.length < 2; i++) {
      await consumeTheLimit();
      await runPaymentIntentsPass(deps, PAGE);
      alerted = await alertBodies(paid);
    }
    expect(alerted.map((a) => a.id).sort()).toEqual([...paid].sort());
    const fromList = alerted.filter((a) => a.payload['payer_account_balance_id'] === null);
    expect(fromList.length).toBeGreaterThanOrEqual(1);
    for (const { payload } of fromList) {
      expect(payload).toMatchObject({
        status: 'paid',
        metadata: {},
        payee_account_balance_id: h.sim.credentials.appWalletId,
      });
      expect(payload['paid_at']).not.toBeNull();
    }

    // Later ticks complete the rows from their full forms; no second alert.
    for (let i = 0; i < 20; i++) {
      const left = await h.database.db
        .selectFrom('rewards.payment_intents')
        .select('id')
        .where('id', 'in', paid)
        .where('payer_account_balance_id', 'is', null)
        .execute();
      if (left.length === 0) break;
      await runPaymentIntentsPass(deps, PAGE);
    }
    const completed = await h.database.db
      .selectFrom('rewards.payment_intents')
      .select(['payer_account_balance_id', 'metadata', 'status'])
      .where('id', 'in', paid)
      .execute();
    for (const row of completed) {
      expect(row.status).toBe('paid');
      expect(row.payer_account_balance_id).not.toBeNull();
    }
    expect(await alertBodies(paid)).toHaveLength(2);
  });
});
