import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import { runPaymentIntentsPass } from '../../../src/streams/payment-intents/pass.js';
import { runResync } from '../../../src/streams/resync.js';
import type { StreamDeps } from '../../../src/streams/stream.js';
import type { ResyncRange } from '../../../src/sync/resync-plan.js';
import { createIntentHarness, type IntentHarness } from './harness.js';

let h: IntentHarness;
let deps: StreamDeps<PartnerApi>;

beforeAll(async () => {
  h = await createIntentHarness('intents_resync');
  // Alerts are recorded and left undelivered: what matters here is how many are recorded.
  deps = await h.deps({ env: { ALERT_WEBHOOK_URL: '' } });
  expect((await runPaymentIntentsPass(deps)).status).toBe('succeeded');
});
afterAll(async () => {
  await h?.close();
});

const transitionsOf = async (id: string) =>
  (
    await h.database.db
      .selectFrom('rewards.payment_intent_transitions')
      .select(['from_status', 'to_status'])
      .where('payment_intent_id', '=', id)
      .orderBy('observed_at')
      .orderBy('id')
      .execute()
  ).map((row) => `${row.from_status ?? 'null'}->${row.to_status}`);
const alertsOf = (id: string) =>
  h.database.db
    .selectFrom('rewards.alerts')
    .select('type')
    .where('payment_intent_id', '=', id)
    .orderBy('created_at')
    .execute();
const statusOf = async (id: string) =>
  (
    await h.database.db
      .selectFrom('rewards.payment_intents')
      .select('status')
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
  ).status;
const resync = (range: ResyncRange) => runResync(deps, 'payment_intents', { range, wait: false });
/** A one-millisecond range around an intent's created_at. */
const rangeAround = (createdAt: string): ResyncRange => ({
  from: Date.parse(createdAt),
  to: Date.parse(createdAt) + 1,
});

describe('resync payment_intents re-reads the full form of every stored intent in the range', () => {
  it('a refund lands through the transition ledger, without an alert; intents created outside the range are not read', async () => {
    const paid = h.sim.control.intents
      .list()
      .filter((intent) => intent.status === 'paid')
      .sort((a, b) => a.created_at.localeCompare(b.created_at));
    expect(paid.length).toBeGreaterThanOrEqual(2);
    const [inRange, outOfRange] = [paid[0]!, paid[1]!];
    h.sim.control.intents.refund(inRange.id);
    h.sim.control.intents.refund(outOfRange.id);

    const result = await resync(rangeAround(inRange.created_at));
    expect(result).toMatchObject({ status: 'succeeded', details: { intents: 1, transitions: 1, alerts: 0 } });
    expect(await statusOf(inRange.id)).toBe('refunded');
    expect(await transitionsOf(inRange.id)).toEqual(['null->paid', 'paid->refunded']);
    expect(await alertsOf(inRange.id)).toEqual([]);
    // Outside the range: not read again.
    expect(await statusOf(outOfRange.id)).toBe('paid');
  });

  it('with payment_intent.refunded in ALERT_EVENTS, a refund a re-sync finds raises its one event', async () => {
    const withEvents = await h.deps({
      env: { ALERT_WEBHOOK_URL: '', ALERT_EVENTS: 'payment_intent.paid,payment_intent.refunded' },
    });
    const target = h.sim.control.intents.create();
    await runPaymentIntentsPass(withEvents);
    h.sim.control.intents.pay(target.id);
    await runPaymentIntentsPass(withEvents);
    h.sim.control.intents.refund(target.id);
    const once = await runResync(withEvents, 'payment_intents', {
      range: rangeAround(target.created_at),
      wait: false,
    });
    expect(once).toMatchObject({ status: 'succeeded', details: { transitions: 1, alerts: 1 } });
    await runResync(withEvents, 'payment_intents', { range: rangeAround(target.created_at), wait: false });
    expect(await alertsOf(target.id)).toEqual([
      { type: 'payment_intent.paid' },
      { type: 'payment_intent.refunded' },
    ]);
  });

  it('an intent paid since it was stored raises its one alert, and a second re-sync raises none', async () => {
    const intent = h.sim.control.intents.create();
    await runPaymentIntentsPass(deps);
    expect(await statusOf(intent.id)).toBe('pending');
    h.sim.control.intents.pay(intent.id);

    const first = await resync(rangeAround(intent.created_at));
    expect(first).toMatchObject({ status: 'succeeded', details: { transitions: 1, alerts: 1 } });
    expect(await alertsOf(intent.id)).toEqual([{ type: 'payment_intent.paid' }]);

    const again = await resync({ from: null, to: null });
    expect(again).toMatchObject({ status: 'succeeded', details: { transitions: 0, alerts: 0 } });
    await runPaymentIntentsPass(deps);
    expect(await alertsOf(intent.id)).toHaveLength(1);
    expect(await transitionsOf(intent.id)).toEqual(['null->pending', 'pending->paid']);
  });

  it('a correction of the full form only (metadata): a plain pass does not see it, a re-sync does', async () => {
    const intent = h.sim.control.intents.list().find((i) => i.status === 'paid')!;
    h.sim.control.intents.correctMetadata(intent.id, { order: 'corrected-42' });
    const metadataOf = async () =>
      (
        await h.database.db
          .selectFrom('rewards.payment_intents')
          .select('metadata')
          .where('id', '=', intent.id)
          .executeTakeFirstOrThrow()
      ).metadata;
    await runPaymentIntentsPass(deps);
    expect(await metadataOf()).not.toEqual({ order: 'corrected-42' });

    const result = await resync(rangeAround(intent.created_at));
    expect(result).toMatchObject({ status: 'succeeded', details: { reread: 1, unchanged: 1, alerts: 0 } });
    expect(await metadataOf()).toEqual({ order: 'corrected-42' });
  });

  it('with no range, every stored intent is re-read once', async () => {
    const stored = await h.database.db.selectFrom('rewards.payment_intents').select('id').execute();
    h.sim.control.requests.clear();
    const result = await resync({ from: null, to: null });
    expect(result).toMatchObject({ status: 'succeeded', details: { intents: stored.length } });
    const byId = h.sim.control.requests
      .list()
      .filter((entry) => /^\/v1\/payment_intents\/[0-9a-f-]{36}$/.test(entry.path));
    expect(new Set(byId.map((entry) => entry.path)).size).toBe(stored.length);
    expect(byId).toHaveLength(stored.length);
  });
});
