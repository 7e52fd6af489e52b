import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import { verifyRewardsSignature } from '../../../src/alerts/verify-signature.js';
import {
  DEFAULT_ALERT_DELIVERY_POLICY,
  type AlertDeliveryPolicy,
} from '../../../src/alerts/delivery-policy.js';
import { fixedClock } from '../../../src/clock.js';
import { runAlertsPass } from '../../../src/alerts/delivery.js';
import { runPaymentIntentsPass } from '../../../src/streams/payment-intents/pass.js';
import type { StreamDeps } from '../../../src/streams/stream.js';
import { createIntentHarness, WEBHOOK_SECRET, type IntentHarness } from './harness.js';

let h: IntentHarness;
let intents: StreamDeps<PartnerApi>;

beforeAll(async () => {
  h = await createIntentHarness('alerts');
  // The intents pass records alerts and leaves them to the alerts pass these tests drive.
  intents = await h.deps({ env: { ALERT_WEBHOOK_URL: '' } });
  await runPaymentIntentsPass(intents); // import history: no alerts
});
afterAll(async () => {
  await h?.close();
});

/** Creates and pays one intent in the simulator and lets the pipeline see it: one alert row. */
async function paidIntent(): Promise<string> {
  const { id } = h.sim.control.intents.create({ metadata: { table: '12' } });
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

/**
 * Lets `ms` pass for the alerts: due times and leases are Postgres's now(), so the stored times move
 * back by `ms`; the pipeline's clock (signatures, an alert's age) moves forward by as much.
 */
async function elapse(clock: ReturnType<typeof fixedClock>, ms: number): Promise<void> {
  const by = sql`${ms} * interval '1 millisecond'`;
  await sql`update rewards.alerts set next_attempt_at = next_attempt_at - ${by}`.execute(h.database.db);
  clock.advance(ms);
}

/** Postgres's now(). */
const postgresNow = async () =>
  (await sql<{ now: Date }>`select now() as now`.execute(h.database.db)).rows[0]!.now.getTime();

const received = (alertId: string) =>
  h.receiver.received.filter((r) => r.headers['rewards-event-id'] === alertId);
const alertRow = (alertId: string) =>
  h.database.db.selectFrom('rewards.alerts').selectAll().where('id', '=', alertId).executeTakeFirstOrThrow();

describe('alert delivery', () => {
  it('POSTs the contract body with a verifiable signature; a tampered body fails; a delivered alert is not sent again', async () => {
    const alertId = await paidIntent();
    const clock = fixedClock(new Date());
    const deps = await h.deps({ clock });
    const outcome = await runAlertsPass(deps);
    expect(outcome.status).toBe('succeeded');
    const [request] = received(alertId);
    expect(request).toBeDefined();
    expect(request!.headers['content-type']).toBe('application/json');
    const body = JSON.parse(request!.rawBody) as {
      id: string;
      type: string;
      created_at: string;
      data: { payment_intent: Record<string, unknown> };
    };
    expect(body.id).toBe(alertId);
    expect(body.type).toBe('payment_intent.paid');
    expect(body.data.payment_intent['status']).toBe('paid');
    expect(body.data.payment_intent['metadata']).toEqual({ table: '12' });
    const header = request!.headers['rewards-signature'];
    expect(
      verifyRewardsSignature({ rawBody: request!.rawBody, header, secret: WEBHOOK_SECRET, now: clock.now() }),
    ).toMatchObject({ ok: true });
    const tampered = request!.rawBody.replace('"paid"', '"refunded"');
    expect(tampered).not.toBe(request!.rawBody);
    expect(
      verifyRewardsSignature({ rawBody: tampered, header, secret: WEBHOOK_SECRET, now: clock.now() }),
    ).toEqual({
      ok: false,
      reason: 'signature-mismatch',
    });
    const row = await alertRow(alertId);
    expect(row.delivered_at).not.toBeNull();
    expect(row.attempts).toBe(1);

    await elapse(clock, 3_600_000);
    await runAlertsPass(deps);
    await runAlertsPass(deps);
    expect(received(alertId)).toHaveLength(1);
  });

  it('retries a failing receiver with exponential backoff and delivers later, attempts counted', async () => {
    const alertId = await paidIntent();
    const clock = fixedClock(new Date());
    const deps = await h.deps({ clock });
    const policy: AlertDeliveryPolicy = { ...DEFAULT_ALERT_DELIVERY_POLICY, baseDelayMs: 10_000 };
    h.receiver.failNext(2);

    // The retry time is Postgres's now() plus the backoff, taken when the failure is recorded.
    let before = await postgresNow();
    await runAlertsPass(deps, policy);
    let after = await postgresNow();
    let row = await alertRow(alertId);
    expect(row.attempts).toBe(1);
    expect(row.delivered_at).toBeNull();
    expect(row.last_error).toContain('HTTP 500');
    expect(row.next_attempt_at.getTime()).toBeGreaterThanOrEqual(before + 10_000);
    expect(row.next_attempt_at.getTime()).toBeLessThanOrEqual(after + 10_000);

    await runAlertsPass(deps, policy); // not due yet: nothing sent
    expect(received(alertId)).toHaveLength(1);

    await elapse(clock, 10_000);
    before = await postgresNow();
    await runAlertsPass(deps, policy);
    after = await postgresNow();
    row = await alertRow(alertId);
    expect(row.attempts).toBe(2);
    expect(row.next_attempt_at.getTime()).toBeGreaterThanOrEqual(before + 20_000);
    expect(row.next_attempt_at.getTime()).toBeLessThanOrEqual(after + 20_000);

    await elapse(clock, 20_000);
    await runAlertsPass(deps, policy);
    row = await alertRow(alertId);
    expect(row.attempts).toBe(3);
    expect(row.delivered_at).not.toBeNull();
    expect(row.last_error).toBeNull();
    const attempts = received(alertId);
    expect(attempts).toHaveLength(3);
    // Same event id every time (receivers dedupe on it), a fresh signature each time.
    expect(new Set(attempts.map((r) => r.rawBody)).size).toBe(1);
    expect(new Set(attempts.map((r) => r.headers['rewards-signature'])).size).toBe(3);
  });

  it('gives up after the configured number of attempts and marks the alert failed', async () => {
    const alertId = await paidIntent();
    const clock = fixedClock(new Date());
    const deps = await h.deps({ clock });
    const policy: AlertDeliveryPolicy = {
      ...DEFAULT_ALERT_DELIVERY_POLICY,
      baseDelayMs: 1_000,
      maxAttempts: 2,
    };
    h.receiver.failNext(10, 503);
    await runAlertsPass(deps, policy);
    await elapse(clock, 1_000);
    const outcome = await runAlertsPass(deps, policy);
    const row = await alertRow(alertId);
    expect(row.attempts).toBe(2);
    expect(row.failed_at).not.toBeNull();
    expect(row.delivered_at).toBeNull();
    expect(row.last_error).toContain('HTTP 503');
    expect(outcome.details?.['gaveUp']).toBe(1);
    await elapse(clock, 86_400_000);
    await runAlertsPass(deps, policy);
    expect(received(alertId)).toHaveLength(2);
    h.receiver.failNext(0);
  });

  it('records a network failure as a failed attempt', async () => {
    const alertId = await paidIntent();
    const clock = fixedClock(new Date());
    const deps = await h.deps({ clock, env: { ALERT_WEBHOOK_URL: 'http://127.0.0.1:9/unreachable' } });
    const outcome = await runAlertsPass(deps);
    expect(outcome.details?.['failedAttempts']).toBeGreaterThanOrEqual(1);
    const row = await alertRow(alertId);
    expect(row.attempts).toBe(1);
    expect(row.last_error).toMatch(/network error|timeout/);
    // Deliver it for real so later tests start clean.
    await elapse(clock, 60_000);
    await runAlertsPass(await h.deps({ clock }));
    expect((await alertRow(alertId)).delivered_at).not.toBeNull();
  });

  it('two alert passes running at once on two connections send each alert once', async () => {
    const ids = [];
    for (let i = 0; i < 12; i++) h.sim.control.intents.create();
    await runPaymentIntentsPass(intents);
    for (const intent of h.sim.control.intents.list().filter((x) => x.status === 'pending'))
      h.sim.control.intents.pay(intent.id);
    await runPaymentIntentsPass(intents);
    const pending = await h.database.db
      .selectFrom('rewards.alerts')
      .select('id')
      .where('delivered_at', 'is', null)
      .where('failed_at', 'is', null)
      .execute();
    ids.push(...pending.map((row) => row.id));
    expect(ids.length).toBeGreaterThanOrEqual(12);
    const small: AlertDeliveryPolicy = { ...DEFAULT_ALERT_DELIVERY_POLICY, concurrency: 1 };
    const [a, b] = await Promise.all([
      runAlertsPass(await h.deps(), small),
      runAlertsPass(await h.deps(), small),
    ]);
    expect(Number(a.rows) + Number(b.rows)).toBe(ids.length);
    for (const id of ids) expect(received(id)).toHaveLength(1);
  });

  it('a webhook URL with user:password@ is sent as Basic auth; the password shows in no error, log or alert row', async () => {
    const alertId = await paidIntent();
    const password = 'p@ss:word-9c1e';
    const url = new URL(h.receiver.url);
    url.username = 'rewards';
    url.password = encodeURIComponent(password);
    const clock = fixedClock(new Date());
    const deps = await h.deps({ clock, env: { ALERT_WEBHOOK_URL: url.toString() } });
    h.receiver.failNext(1, 401);
    await runAlertsPass(deps);
    expect((await alertRow(alertId)).last_error).toContain('HTTP 401');
    await elapse(clock, 60_000);
    await runAlertsPass(deps);
    const requests = received(alertId);
    expect(requests).toHaveLength(2);
    for (const request of requests)
      expect(request.headers.authorization).toBe(
        `Basic ${Buffer.from(`rewards:${password}`).toString('base64')}`,
      );
    expect((await alertRow(alertId)).delivered_at).not.toBeNull();
    const everything = h.logs.join('') + JSON.stringify(await alertRow(alertId));
    for (const shown of [password, encodeURIComponent(password)]) expect(everything).not.toContain(shown);
  });

  it('keeps the webhook secret out of every log line', () => {
    const text = h.logs.join('');
    expect(text).toContain('alert delivered');
    expect(text).not.toContain(WEBHOOK_SECRET);
  });
});
