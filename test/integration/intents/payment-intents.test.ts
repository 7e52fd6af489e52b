import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import { runAlertsPass } from '../../../src/alerts/delivery.js';
import { runPaymentIntentsPass } from '../../../src/streams/payment-intents/pass.js';
import type { StreamDeps } from '../../../src/streams/stream.js';
import { createIntentHarness, type IntentHarness } from './harness.js';

let h: IntentHarness;
let deps: StreamDeps<PartnerApi>;

beforeAll(async () => {
  h = await createIntentHarness('intents');
  // Alerts are recorded and left undelivered here; delivery is alert-delivery.test.ts's subject.
  deps = await h.deps({ env: { ALERT_WEBHOOK_URL: '' } });
});
afterAll(async () => {
  await h?.close();
});

async function transitionsOf(id: string): Promise<string[]> {
  const rows = await h.database.db
    .selectFrom('rewards.payment_intent_transitions')
    .select(['from_status', 'to_status'])
    .where('payment_intent_id', '=', id)
    .orderBy('observed_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => `${row.from_status ?? 'null'}->${row.to_status}`);
}

async function alertsOf(id: string) {
  return h.database.db.selectFrom('rewards.alerts').selectAll().where('payment_intent_id', '=', id).execute();
}

describe('payment intents stream', () => {
  it('imports the existing history on the first pass without raising alerts for intents paid before watching began', async () => {
    const outcome = await runPaymentIntentsPass(deps);
    expect(outcome.status).toBe('succeeded');
    const existing = h.sim.control.intents.list();
    const rows = await h.database.db.selectFrom('rewards.payment_intents').select(['id', 'status']).execute();
    expect(rows.length).toBe(existing.length);
    expect(new Map(rows.map((r) => [r.id, r.status]))).toEqual(
      new Map(existing.map((i) => [i.id, i.status])),
    );
    expect(existing.some((i) => i.status === 'paid')).toBe(true);
    const alerts = await h.database.db.selectFrom('rewards.alerts').selectAll().execute();
    expect(alerts).toEqual([]);
    const firstSights = await h.database.db
      .selectFrom('rewards.payment_intent_transitions')
      .select('from_status')
      .execute();
    expect(firstSights.length).toBe(existing.length);
    expect(firstSights.every((t) => t.from_status === null)).toBe(true);
    const state = await h.database.db
      .selectFrom('rewards.sync_state')
      .select('state')
      .where('stream', '=', 'payment_intents')
      .executeTakeFirstOrThrow();
    expect((state.state as { watchingSince?: string }).watchingSince).toBeDefined();
  });

  it('fills in the full form of rows first written from the list form', async () => {
    for (let pass = 0; pass < 3; pass++) await runPaymentIntentsPass(deps);
    const partial = await h.database.db
      .selectFrom('rewards.payment_intents')
      .select('id')
      .where('payer_account_balance_id', 'is', null)
      .execute();
    expect(partial).toEqual([]);
  });

  it('records pending -> paid and raises exactly one alert with the contract payload', async () => {
    await h.knowAppWallet(); // from now on the list is filtered by the app wallet as payee
    const created = h.sim.control.intents.create({ description: 'Table 7', metadata: { order_id: 'A-7' } });
    await runPaymentIntentsPass(deps);
    expect(await transitionsOf(created.id)).toEqual(['null->pending']);
    const paid = h.sim.control.intents.pay(created.id);
    await runPaymentIntentsPass(deps);
    await runPaymentIntentsPass(deps);
    expect(await transitionsOf(created.id)).toEqual(['null->pending', 'pending->paid']);
    const alerts = await alertsOf(created.id);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]!.type).toBe('payment_intent.paid');
    expect(alerts[0]!.payload).toEqual({
      id: created.id,
      amount: { value: paid.amount.value, currency: paid.amount.currency.toLowerCase() },
      status: 'paid',
      paid_at: paid.paid_at,
      description: 'Table 7',
      metadata: { order_id: 'A-7' },
      payer_account_balance_id: paid.payer_account_balance_id,
      payee_account_balance_id: h.sim.credentials.appWalletId,
    });
    const row = await h.database.db
      .selectFrom('rewards.payment_intents')
      .selectAll()
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('paid');
    expect(row.paid_at?.toISOString()).toBe(paid.paid_at);
    expect(row.next_poll_at).toBeNull();
  });

  it('records pending -> canceled without an alert', async () => {
    const created = h.sim.control.intents.create();
    await runPaymentIntentsPass(deps);
    h.sim.control.intents.cancel(created.id);
    await runPaymentIntentsPass(deps);
    expect(await transitionsOf(created.id)).toEqual(['null->pending', 'pending->canceled']);
    expect(await alertsOf(created.id)).toEqual([]);
  });

  it('records paid -> refunded, and the refund raises no second alert', async () => {
    const created = h.sim.control.intents.create();
    await runPaymentIntentsPass(deps);
    h.sim.control.intents.pay(created.id);
    await runPaymentIntentsPass(deps);
    h.sim.control.intents.refund(created.id);
    await runPaymentIntentsPass(deps);
    expect(await transitionsOf(created.id)).toEqual(['null->pending', 'pending->paid', 'paid->refunded']);
    expect(await alertsOf(created.id)).toHaveLength(1);
    const row = await h.database.db
      .selectFrom('rewards.payment_intents')
      .select(['status', 'refunded_at'])
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('refunded');
    expect(row.refunded_at).not.toBeNull();
  });

  it('records an intent that expired while pending as canceled and stops polling it', async () => {
    const created = h.sim.control.intents.create();
    await runPaymentIntentsPass(deps);
    h.sim.control.intents.expire(created.id);
    await runPaymentIntentsPass(deps);
    expect(await transitionsOf(created.id)).toEqual(['null->pending', 'pending->canceled']);
    const row = await h.database.db
      .selectFrom('rewards.payment_intents')
      .select(['status', 'next_poll_at'])
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'canceled', next_poll_at: null });
  });

  it('alerts for an intent first seen already paid when it was paid after watching began', async () => {
    const created = h.sim.control.intents.create();
    h.sim.control.intents.pay(created.id);
    await runPaymentIntentsPass(deps);
    expect(await transitionsOf(created.id)).toEqual(['null->paid']);
    expect(await alertsOf(created.id)).toHaveLength(1);
  });

  it('raises exactly one alert per intent when two pollers run at once on two database connections', async () => {
    const ids = Array.from({ length: 25 }, () => h.sim.control.intents.create().id);
    await runPaymentIntentsPass(deps);
    for (const id of ids) h.sim.control.intents.pay(id);
    const other = await h.deps({ env: { ALERT_WEBHOOK_URL: '' } });
    const [a, b] = await Promise.all([runPaymentIntentsPass(deps), runPaymentIntentsPass(other)]);
    expect([a.status, b.status]).toEqual(['succeeded', 'succeeded']);
    // Both passes saw the payments in the list and tried to record them: the race was real.
    expect(Number(a.details?.['paidSeenInList'])).toBeGreaterThan(0);
    expect(Number(b.details?.['paidSeenInList'])).toBeGreaterThan(0);
    const alerts = await h.database.db
      .selectFrom('rewards.alerts')
      .select(['payment_intent_id'])
      .where('payment_intent_id', 'in', ids)
      .execute();
    expect(alerts.map((x) => x.payment_intent_id).sort()).toEqual([...ids].sort());
    for (const id of ids) expect(await transitionsOf(id)).toEqual(['null->pending', 'pending->paid']);
  });

  it('without a webhook, records alerts, leaves them undelivered and logs each once', async () => {
    const unconfigured = await h.deps({ env: { ALERT_WEBHOOK_URL: '' } });
    const before = h.logs.length;
    const first = await runAlertsPass(unconfigured);
    const second = await runAlertsPass(unconfigured);
    const undelivered = await h.database.db
      .selectFrom('rewards.alerts')
      .select('id')
      .where('delivered_at', 'is', null)
      .execute();
    expect(undelivered.length).toBeGreaterThan(0);
    expect(first.details?.['noted']).toBe(undelivered.length);
    expect(second.details?.['noted']).toBe(0);
    const notes = h.logs.slice(before).filter((line) => line.includes('ALERT_WEBHOOK_URL is not set'));
    expect(notes).toHaveLength(undelivered.length);
    expect(h.receiver.received).toHaveLength(0);
  });

  it('never writes the webhook secret or any credential into a log line', () => {
    const text = h.logs.join('');
    expect(text.length).toBeGreaterThan(0);
    for (const secret of [
      h.env['ALERT_WEBHOOK_SECRET']!,
      h.sim.credentials.clientSecret,
      h.sim.credentials.refreshToken,
    ]) {
      expect(text).not.toContain(secret);
    }
  });
});
