import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import { runPaymentIntentsPass } from '../../../src/streams/payment-intents/pass.js';
import type { StreamDeps } from '../../../src/streams/stream.js';
import { createIntentHarness, type IntentHarness } from './harness.js';

// Issue 13.6: an intent seen `paid` whose full form fails validation still alerts, with what
// validated; the bad full form is in rejected_records with a reason naming the field.

let h: IntentHarness;
let deps: StreamDeps<PartnerApi>;

beforeAll(async () => {
  h = await createIntentHarness('malformed_full_form');
  deps = await h.deps({ env: { ALERT_WEBHOOK_URL: '' } }); // alerts recorded, not sent: not what this file tests
  await runPaymentIntentsPass(deps); // import history: no alerts
});
afterEach(() => h.sim.control.faults.reset());
afterAll(async () => {
  await h?.close();
});

const alertsOf = (id: string) =>
  h.database.db.selectFrom('rewards.alerts').selectAll().where('payment_intent_id', '=', id).execute();
const rejectionsOf = (id: string) =>
  h.database.db
    .selectFrom('rewards.rejected_records')
    .select(['stream', 'reason'])
    .where('record_id', '=', id)
    .execute();
const rowOf = (id: string) =>
  h.database.db
    .selectFrom('rewards.payment_intents')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

describe('a paid intent whose full form fails validation', () => {
  it('a number in metadata: the rest of the full form is kept, and pending -> paid raises one alert without metadata', async () => {
    const { id } = h.sim.control.intents.create({ metadata: { table: '12' } });
    h.sim.control.faults.set({ malformedIntents: { [id]: 'metadata' } });
    const seen = await runPaymentIntentsPass(deps);
    expect(seen.details).toMatchObject({ salvaged: 1, rejected: 1 });
    expect((await rowOf(id)).payer_account_balance_id).not.toBeNull();
    const paid = h.sim.control.intents.pay(id);
    await runPaymentIntentsPass(deps);

    const [alert] = await alertsOf(id);
    expect(alert).toBeDefined();
    const payload = alert!.payload as Record<string, unknown>;
    expect(payload).toMatchObject({
      id,
      status: 'paid',
      paid_at: new Date(paid.paid_at as string).toISOString(),
      payer_account_balance_id: paid.payer_account_balance_id,
      payee_account_balance_id: paid.payee_account_balance_id,
    });
    // The bad metadata is not guessed at.
    expect(payload['metadata']).toEqual({});
    expect((await rowOf(id)).metadata).toBeNull();
    expect(await rejectionsOf(id)).toEqual([
      { stream: 'payment_intents', reason: expect.stringMatching(/^metadata\.table: /) as string },
    ]);
  });

  it('first seen already paid with an unreadable paid_at: still one alert (updated_at after watching began)', async () => {
    const { id } = h.sim.control.intents.create();
    h.sim.control.intents.pay(id);
    h.sim.control.faults.set({ malformedIntents: { [id]: 'paid_at' } });
    await runPaymentIntentsPass(deps);
    const alerts = await alertsOf(id);
    expect(alerts).toHaveLength(1);
    expect((alerts[0]!.payload as Record<string, unknown>)['paid_at']).toBeNull();
    expect((await rowOf(id)).status).toBe('paid');
    expect(await rejectionsOf(id)).toEqual([
      { stream: 'payment_intents', reason: expect.stringMatching(/^paid_at: /) as string },
    ]);
  });

  it('an unknown status in the full form of an intent first seen paid: the list form says paid, so the alert is raised', async () => {
    const { id } = h.sim.control.intents.create();
    h.sim.control.faults.set({ malformedIntents: { [id]: 'status' } });
    h.sim.control.intents.pay(id);
    await runPaymentIntentsPass(deps);
    expect(await alertsOf(id)).toHaveLength(1);
    expect((await rowOf(id)).status).toBe('paid');
  });

  it('once the full form is valid again, the row is completed and no second alert is raised', async () => {
    const { id } = h.sim.control.intents.create();
    h.sim.control.faults.set({ malformedIntents: { [id]: 'amount' } });
    h.sim.control.intents.pay(id);
    await runPaymentIntentsPass(deps);
    expect(await alertsOf(id)).toHaveLength(1);
    h.sim.control.faults.reset();
    await runPaymentIntentsPass(deps, { fullSweepEveryMs: 0 });
    expect(await alertsOf(id)).toHaveLength(1);
    expect((await rowOf(id)).status).toBe('paid');
  });
});
