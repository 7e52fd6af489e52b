import Stripe from 'stripe';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import { packageVersion } from '../../../src/package-info.js';
import { runAlertsPass } from '../../../src/alerts/delivery.js';
import { runPaymentIntentsPass } from '../../../src/streams/payment-intents/pass.js';
import type { StreamDeps } from '../../../src/streams/stream.js';
import { createIntentHarness, WEBHOOK_SECRET, type IntentHarness, type ReceivedRequest } from './harness.js';

// Receivers verify our deliveries with maintained libraries (docs/payment-intents.md, "Verifying a
// delivery"): Stripe's SDK for the default scheme (it is Stripe's, byte for byte), the Standard
// Webhooks library for ALERT_SIGNATURE_SCHEME=standard-webhooks. Real deliveries: the alerts pass
// POSTs paid-intent alerts to a receiver over HTTP.

let h: IntentHarness;
let intents: StreamDeps<PartnerApi>;
// Constructing a client makes no request; its webhooks helper is all we use.
const stripe = new Stripe('sk_test_unused');

beforeAll(async () => {
  h = await createIntentHarness('interop');
  intents = await h.deps({ env: { ALERT_WEBHOOK_URL: '' } });
  await runPaymentIntentsPass(intents); // import history: no alerts
});
afterAll(async () => {
  await h?.close();
});

/** Pays one intent in the simulator and lets the pipeline see it: one alert row, its id returned. */
async function paidIntent(): Promise<string> {
  const { id } = h.sim.control.intents.create({ metadata: { table: '7' } });
  await runPaymentIntentsPass(intents);
  h.sim.control.intents.pay(id);
  await runPaymentIntentsPass(intents);
  const alert = await h.database.db
    .selectFrom('rewards.alerts')
    .select('id')
    .where('payment_intent_id', '=', id)
    .executeTakeFirstOrThrow();
  return alert.id;
}

const deliveriesOf = (alertId: string): ReceivedRequest[] =>
  h.receiver.received.filter((r) => r.headers['rewards-event-id'] === alertId);

const header = (request: ReceivedRequest, name: string): string => {
  const value = request.headers[name];
  if (typeof value !== 'string') throw new Error(`no ${name} header`);
  return value;
};

describe('webhook receivers verify real deliveries with maintained libraries', () => {
  it("Stripe's SDK accepts a delivery of the default scheme (stripe.webhooks.constructEvent) and rejects a tampered body", async () => {
    const alertId = await paidIntent();
    await runAlertsPass(await h.deps());
    const [delivery] = deliveriesOf(alertId);
    expect(delivery).toBeDefined();
    const signature = header(delivery!, 'rewards-signature');

    const event = stripe.webhooks.constructEvent(delivery!.rawBody, signature, WEBHOOK_SECRET) as unknown as {
      id: string;
      type: string;
      data: { payment_intent: { status: string } };
    };
    expect(event.id).toBe(alertId);
    expect(event.type).toBe('payment_intent.paid');
    expect(event.data.payment_intent.status).toBe('paid');

    const tampered = delivery!.rawBody.replace('"paid"', '"refunded"');
    expect(tampered).not.toBe(delivery!.rawBody);
    expect(() => stripe.webhooks.constructEvent(tampered, signature, WEBHOOK_SECRET)).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
    expect(() => stripe.webhooks.constructEvent(delivery!.rawBody, signature, `${WEBHOOK_SECRET}x`)).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
  });

  it('ALERT_SIGNATURE_SCHEME=standard-webhooks: the standardwebhooks library verifies each delivery, webhook-id stable across retries, a tampered body rejected', async () => {
    const alertId = await paidIntent();
    const deps = await h.deps({ env: { ALERT_SIGNATURE_SCHEME: 'standard-webhooks' } });
    h.receiver.failNext(1);
    await runAlertsPass(deps); // refused by the receiver: retried later
    await h.database.db
      .updateTable('rewards.alerts')
      .set({ next_attempt_at: new Date(0) })
      .where('id', '=', alertId)
      .execute();
    await runAlertsPass(deps);
    const deliveries = deliveriesOf(alertId);
    expect(deliveries).toHaveLength(2);

    const receiver = new Webhook(WEBHOOK_SECRET);
    for (const delivery of deliveries) {
      expect(delivery.headers['rewards-signature']).toBeUndefined();
      expect(header(delivery, 'webhook-id')).toBe(alertId); // = Rewards-Event-Id = body id, on every attempt
      const event = receiver.verify(delivery.rawBody, delivery.headers as Record<string, string>) as {
        id: string;
        type: string;
      };
      expect(event).toMatchObject({ id: alertId, type: 'payment_intent.paid' });
      const tampered = delivery.rawBody.replace('"paid"', '"refunded"');
      expect(() => receiver.verify(tampered, delivery.headers as Record<string, string>)).toThrow(
        WebhookVerificationError,
      );
    }
    const row = await h.database.db
      .selectFrom('rewards.alerts')
      .select(['delivered_at', 'attempts'])
      .where('id', '=', alertId)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ attempts: 2 });
    expect(row.delivered_at).not.toBeNull();
  });

  it('every delivery says who sends it: User-Agent rewards-etl/<version>, or SVC_USER_AGENT when set', async () => {
    const first = await paidIntent();
    await runAlertsPass(await h.deps());
    expect(header(deliveriesOf(first)[0]!, 'user-agent')).toBe(`rewards-etl/${packageVersion()}`);

    const second = await paidIntent();
    await runAlertsPass(
      await h.deps({ env: { SVC_USER_AGENT: 'acme-rewards-sync/2.0 (ops@acme.example)' } }),
    );
    expect(header(deliveriesOf(second)[0]!, 'user-agent')).toBe('acme-rewards-sync/2.0 (ops@acme.example)');
  });
});
