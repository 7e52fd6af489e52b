import type { PaymentIntent, PaymentIntentStatus } from '../../records/payment-intent.js';
import { deliverAlertsSoon } from '../../alerts/delivery.js';
import type { ObservationOutcome } from './record-observation.js';
import type { Tick } from './tick-context.js';

/** Counts a recorded observation, logs its transition, and starts delivering its alert at once. */
export function noteObservation(
  tick: Tick,
  intent: PaymentIntent,
  input: { previous: PaymentIntentStatus | null; outcome: ObservationOutcome; fromList: boolean },
): void {
  const { outcome, previous } = input;
  const { log } = tick;
  if (!outcome.written) return;
  if (outcome.decision.transition) {
    tick.stats.transitions++;
    if (previous === null) tick.stats.firstSights++;
    const { from, to } = outcome.decision.transition;
    log.info({ paymentIntentId: intent.id, from, to }, 'payment intent transition');
  }
  if (outcome.alertId === null) return;
  tick.stats.alerts++;
  if (input.fromList) tick.stats.alertsFromList++;
  const type = outcome.decision.event ?? 'payment_intent.paid';
  log.info({ paymentIntentId: intent.id, alertId: outcome.alertId, type }, `${type} alert recorded`);
  // In the background: the tick never waits for the receiver (docs/payment-intents.md).
  deliverAlertsSoon(tick.deps, [outcome.alertId]);
}
