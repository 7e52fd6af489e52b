import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import { verifyRewardsSignature } from '../../../src/alerts/verify-signature.js';
import { runAlertsPass } from '../../../src/alerts/delivery.js';
import { runPaymentIntentsPass } from '../../../src/streams/payment-intents/pass.js';
import type { StreamDeps } from '../../../src/streams/stream.js';
import { createIntentHarness, WEBHOOK_SECRET, type IntentHarness } from './harness.js';

// ALERT_EVENTS (docs/payment-intents.md, "Events"): canceled and refunded intents raise one signed
// event each, exactly once per (type, intent); the default keeps today's paid-only behaviour.

let h: IntentHarness;
let allEvents: StreamDeps<PartnerApi>;
let byDefault: StreamDeps<PartnerApi>;
const ALL =
  'payment_intent.paid,payment_intent.canceled,payment_intent.refunded,schema.drift,member.needs_reauth';

beforeAll(async () => {
  h = await createIntentHarness('intent-events');
  // Recorded by the intents pass, delivered by the alerts pass these tests drive.
  allEvents = await h.deps({ env: { ALERT_WEBHOOK_URL: '', ALERT_EVENTS: ALL } });
  byDefault = await h.deps({ env: { ALERT_WEBHOOK_URL: '' } });
  await runPaymentIntentsPass(allEvents); // import history: no events for what happened before watching
});
afterAll(async () => {
  await h?.close();
});

const eventsOf = (id: string) =>
  h.database.db
    .selectFrom('rewards.alerts')
    .select(['id', 'type', 'subject', 'payment_intent_id'])
    .where('subject', '=', id)
    .orderBy('created_at')
    .execute();

describe('payment intent events', () => {
  it('importing history raises no event, whatever state the intents were in', async () => {
    const rows = await h.database.db.selectFrom('rewards.alerts').select('type').execute();
    expect(rows).toEqual([]);
    expect(h.sim.control.intents.list().some((i) => i.status === 'canceled')).toBe(true);
  });

  it('a canceled intent raises one payment_intent.canceled, and later passes raise no second', async () => {
    const { id } = h.sim.control.intents.create();
    await runPaymentIntentsPass(allEvents);
    h.sim.control.intents.cancel(id);
    await runPaymentIntentsPass(allEvents);
    await runPaymentIntentsPass(allEvents);
    expect(await eventsOf(id)).toEqual([
      expect.objectContaining({ type: 'payment_intent.canceled', subject: id, payment_intent_id: id }),
    ]);
  });

  it('paid then refunded: one paid and one refunded event, the refund seen as the list and full form show it', async () => {
    const { id } = h.sim.control.intents.create();
    await runPaymentIntentsPass(allEvents);
    h.sim.control.intents.pay(id);
    await runPaymentIntentsPass(allEvents);
    h.sim.control.intents.refund(id);
    // The refund is found by the list sweeps (a paid intent is no longer polled by id).
    for (let pass = 0; pass < 3; pass++) await runPaymentIntentsPass(allEvents);
    expect((await eventsOf(id)).map((e) => e.type)).toEqual([
      'payment_intent.paid',
      'payment_intent.refunded',
    ]);
    const transitions = await h.database.db
      .selectFrom('rewards.payment_intent_transitions')
      .select('to_status')
      .where('payment_intent_id', '=', id)
      .execute();
    expect(transitions.map((t) => t.to_status)).toContain('refunded');
  });

  it('every event is POSTed once, signed like paid alerts, with its type and the intent in data.payment_intent', async () => {
    const webhook = await h.deps({ env: { ALERT_EVENTS: ALL } });
    await runAlertsPass(webhook);
    await runAlertsPass(webhook);
    const rows = await h.database.db.selectFrom('rewards.alerts').selectAll().execute();
    expect(rows.length).toBe(3);
    for (const row of rows) {
      const requests = h.receiver.received.filter((r) => r.headers['rewards-event-id'] === row.id);
      expect(requests).toHaveLength(1);
      const request = requests[0]!;
      expect(
        verifyRewardsSignature({
          rawBody: request.rawBody,
          header: request.headers['rewards-signature'],
          secret: WEBHOOK_SECRET,
        }).ok,
      ).toBe(true);
      const body = JSON.parse(request.rawBody) as {
        id: string;
        type: string;
        data: { payment_intent: Record<string, unknown> };
      };
      expect(body.id).toBe(row.id);
      expect(body.type).toBe(row.type);
      expect(body.data.payment_intent['id']).toBe(row.payment_intent_id);
      if (row.type !== 'payment_intent.paid') {
        expect(Object.keys(body.data.payment_intent).sort()).toEqual(
          [
            'id',
            'amount',
            'status',
            'paid_at',
            'description',
            'metadata',
            'payer_account_balance_id',
            'payee_account_balance_id',
            'canceled_at',
            'refunded_at',
          ].sort(),
        );
      } else {
        // Today's paid body, unchanged: exactly these fields (jsonb keeps no key order).
        expect(Object.keys(body.data.payment_intent).sort()).toEqual(
          [
            'id',
            'amount',
            'status',
            'paid_at',
            'description',
            'metadata',
            'payer_account_balance_id',
            'payee_account_balance_id',
          ].sort(),
        );
      }
    }
    const refunded = rows.find((r) => r.type === 'payment_intent.refunded')!;
    const body = JSON.parse(
      h.receiver.received.find((r) => r.headers['rewards-event-id'] === refunded.id)!.rawBody,
    ) as { data: { payment_intent: { status: string; refunded_at: string | null } } };
    expect(body.data.payment_intent.status).toBe('refunded');
    expect(body.data.payment_intent.refunded_at).not.toBeNull();
  });

  it('default ALERT_EVENTS: cancel and refund raise nothing, paid raises its alert as before', async () => {
    const canceled = h.sim.control.intents.create();
    const paid = h.sim.control.intents.create();
    await runPaymentIntentsPass(byDefault);
    h.sim.control.intents.cancel(canceled.id);
    h.sim.control.intents.pay(paid.id);
    await runPaymentIntentsPass(byDefault);
    h.sim.control.intents.refund(paid.id);
    for (let pass = 0; pass < 3; pass++) await runPaymentIntentsPass(byDefault);
    expect(await eventsOf(canceled.id)).toEqual([]);
    expect((await eventsOf(paid.id)).map((e) => e.type)).toEqual(['payment_intent.paid']);
  });

  it('an intent first seen already canceled, canceled after watching began, raises one canceled event', async () => {
    const { id } = h.sim.control.intents.create();
    h.sim.control.intents.cancel(id); // between two passes: never seen pending
    await runPaymentIntentsPass(allEvents);
    await runPaymentIntentsPass(allEvents);
    expect(await eventsOf(id)).toEqual([
      expect.objectContaining({ type: 'payment_intent.canceled', subject: id, payment_intent_id: id }),
    ]);
  });
});
