import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import { DEFAULT_ALERT_DELIVERY_POLICY } from '../../../src/alerts/delivery-policy.js';
import { runAlertsPass } from '../../../src/alerts/delivery.js';
import { runPaymentIntentsPass } from '../../../src/streams/payment-intents/pass.js';
import type { StreamDeps } from '../../../src/streams/stream.js';
import { createIntentHarness, type IntentHarness } from './harness.js';

// Issue 26: one limiter for every alert delivery path of a process (the alerts pass and the fast
// path right after a payment commits), and the intents tick never waits for the receiver.

const PAID_AT_ONCE = 120;
const RECEIVER_ANSWERS_AFTER_MS = 5_000;
const CAP = DEFAULT_ALERT_DELIVERY_POLICY.concurrency;

let h: IntentHarness;
let deps: StreamDeps<PartnerApi>;

/** Resolves once `condition` holds; fails the test after `timeoutMs` (a bound, not a measurement). */
async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(async () => {
  h = await createIntentHarness('alert_concurrency');
  deps = await h.deps();
  await h.knowAppWallet();
  await runPaymentIntentsPass(deps); // start watching; imports the history
  for (const intent of h.sim.control.intents.list())
    if (intent.status === 'pending') h.sim.control.intents.cancel(intent.id);
  for (let i = 0; i < PAID_AT_ONCE; i++) h.sim.control.intents.create();
  await runPaymentIntentsPass(deps); // first sights: the full forms are stored, nothing alerts yet
});
afterAll(async () => {
  await h?.close();
});

describe('alert deliveries share one limiter and never hold up the intents tick', () => {
  it(`${PAID_AT_ONCE} intents paid at once, a receiver answering in 5 s: at most ${CAP} POSTs in flight, and the tick ends before the receiver answers`, async () => {
    for (const intent of h.sim.control.intents.list())
      if (intent.status === 'pending') h.sim.control.intents.pay(intent.id);
    // The receiver answers nothing until the tick has returned: a tick that waited for it would
    // never return (the test would fail at its timeout), whatever the machine's speed.
    h.receiver.answerAfter(RECEIVER_ANSWERS_AFTER_MS);
    h.receiver.holdAnswers();
    const outcome = await runPaymentIntentsPass(deps);
    expect(outcome.details).toMatchObject({ alerts: PAID_AT_ONCE });
    expect(h.receiver.inFlight().answeredAt).toEqual([]);

    // The alerts pass of the same process takes its slots from the same limiter meanwhile.
    const controller = new AbortController();
    const pass = runAlertsPass({ ...deps, signal: controller.signal });
    await until(() => h.receiver.received.length >= CAP, `${CAP} POSTs at the receiver`);
    h.receiver.releaseAnswers();
    // Past the first answers, the next deliveries (of either path) take the freed slots.
    await until(() => h.receiver.received.length >= 2 * CAP, `${2 * CAP} POSTs at the receiver`);
    controller.abort();

    const flight = h.receiver.inFlight();
    expect(flight.max).toBe(CAP);
    // Each alert was POSTed at most once: no alert waited in a queue past its lease.
    const ids = h.receiver.received.map((r) => r.headers['rewards-event-id']);
    expect(new Set(ids).size).toBe(ids.length);

    // Shutdown starts no queued delivery and waits for those in flight; the rest stay due.
    h.receiver.answerAfter(0);
    await deps.alertDeliveries.close(0);
    await pass;
    expect(h.receiver.inFlight().max).toBe(CAP);
    const undelivered = await h.database.db
      .selectFrom('rewards.alerts')
      .select('id')
      .where('delivered_at', 'is', null)
      .execute();
    expect(undelivered.length).toBeGreaterThan(0);
    expect(
      undelivered.length + new Set(h.receiver.received.map((r) => r.headers['rewards-event-id'])).size,
    ).toBe(PAID_AT_ONCE);
  });
});
