import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import { verifyRewardsSignature } from '../../../src/alerts/verify-signature.js';
import { runAlertsPass } from '../../../src/alerts/delivery.js';
import { runPaymentIntentsPass } from '../../../src/streams/payment-intents/pass.js';
import type { StreamDeps } from '../../../src/streams/stream.js';
import { createIntentHarness, WEBHOOK_SECRET, type IntentHarness } from './harness.js';

// Issue 17: a payment is alerted from the list form when the warehouse holds the rest, the alert
// is POSTed as soon as it commits, and a scheduled pass keeps sweeping while intents are open.

let h: IntentHarness;
let deps: StreamDeps<PartnerApi>;

beforeAll(async () => {
  h = await createIntentHarness('fast_alerts');
  // The simulator's own intents are all closed or imported here: only this file's intents are open.
  deps = await h.deps({ env: { SVC_RATE_LIMIT_RPS: '10' } });
  await h.knowAppWallet();
  await runPaymentIntentsPass(deps); // start watching; imports the history
  for (const intent of h.sim.control.intents.list())
    if (intent.status === 'pending') h.sim.control.intents.cancel(intent.id);
  await runPaymentIntentsPass(deps);
});
afterAll(async () => {
  await h?.close();
});

const byIdFetches = (id: string) =>
  h.sim.control.requests.list().filter((r) => r.method === 'GET' && r.path === `/v1/payment_intents/${id}`);
const receivedFor = (id: string) =>
  h.receiver.received.filter(
    (r) =>
      (JSON.parse(r.rawBody) as { data: { payment_intent: { id: string } } }).data.payment_intent.id === id,
  );

describe('paid alerts in seconds', () => {
  it('a payment of an intent whose full form is stored: alerted from the list form, no by-id fetch, POSTed as soon as it commits, without waiting for the alerts pass', async () => {
    const { id } = h.sim.control.intents.create({ description: 'Table 9', metadata: { order: 'B-9' } });
    await runPaymentIntentsPass(deps); // first sight from the list, then its full form
    expect(byIdFetches(id)).toHaveLength(1);
    const paid = h.sim.control.intents.pay(id);

    const outcome = await runPaymentIntentsPass(deps);
    // Delivered in the background: the tick does not wait for the receiver.
    await deps.alertDeliveries.whenIdle();

    expect(outcome.details).toMatchObject({ alertsFromList: 1, alerts: 1 });
    expect(byIdFetches(id)).toHaveLength(1); // still only the fetch of the pending form
    const [post] = receivedFor(id);
    expect(post).toBeDefined();
    const body = JSON.parse(post!.rawBody) as { data: { payment_intent: Record<string, unknown> } };
    expect(body.data.payment_intent).toEqual({
      id,
      amount: { value: paid.amount.value, currency: paid.amount.currency.toLowerCase() },
      status: 'paid',
      paid_at: paid.paid_at,
      description: 'Table 9',
      metadata: { order: 'B-9' },
      payer_account_balance_id: paid.payer_account_balance_id,
      payee_account_balance_id: h.sim.credentials.appWalletId,
    });
    expect(
      verifyRewardsSignature({
        rawBody: post!.rawBody,
        header: post!.headers['rewards-signature'],
        secret: WEBHOOK_SECRET,
      }),
    ).toMatchObject({ ok: true });
    // Exactly once: the alerts pass finds nothing left to send, a later sweep raises nothing.
    const alerts = await runAlertsPass(deps);
    expect(alerts.details).toMatchObject({ delivered: 0 });
    await runPaymentIntentsPass(deps, { fullSweepEveryMs: 0 });
    expect(receivedFor(id)).toHaveLength(1);
    const rows = await h.database.db
      .selectFrom('rewards.alerts')
      .select('delivered_at')
      .where('payment_intent_id', '=', id)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.delivered_at).not.toBeNull();
  });

  it('a scheduled pass keeps ticking while intents are open: a payment made mid-pass is alerted and POSTed at once, within the rate share', async () => {
    const { id } = h.sim.control.intents.create();
    await runPaymentIntentsPass(deps);
    const slotMs = 3_000;
    const started = Date.now();
    const payLater = new Promise<string>((resolve) =>
      setTimeout(() => resolve(h.sim.control.intents.pay(id).paid_at ?? ''), 1_000),
    );
    const outcome = await runPaymentIntentsPass(deps, { slotMs, tickEveryMs: 500 });
    await payLater;
    await deps.alertDeliveries.whenIdle();

    expect(Number(outcome.details?.['ticks'])).toBeGreaterThanOrEqual(2);
    expect(outcome.details).toMatchObject({ alertsFromList: 1 });
    expect(receivedFor(id)).toHaveLength(1);
    // Pacing: at most the share (10 rps x 0.5) over the slot, plus the first tick's budget.
    const elapsedS = (Date.now() - started) / 1000;
    expect(outcome.requests).toBeLessThanOrEqual(Math.ceil(5 * elapsedS) + 5);
  });

  it('with nothing open, a scheduled pass is one tick', async () => {
    const outcome = await runPaymentIntentsPass(deps, { slotMs: 3_000, tickEveryMs: 500 });
    expect(outcome.details).toMatchObject({ ticks: 1, open: 0 });
  });
});
