import { randomUUID } from 'node:crypto';
import type { PaymentIntent } from '../records/payment-intent.js';
import { alertPayloadFromIntent, intentEventPayloadFromIntent, PAYMENT_INTENT_PAID } from './alert-body.js';
import type { AlertEventType } from '../sync/alert-events.js';
import { recordAlertEvent } from './alert-store.js';
import type { Executor } from '../warehouse/database.js';

/**
 * Records the event an intent observation raises (decideIntentObservation), in the caller's
 * transaction. Returns the alert's id, or null when the unique index says it is already recorded.
 */
export async function recordIntentEvent(
  db: Executor,
  input: { event: AlertEventType; intent: PaymentIntent; at: Date },
): Promise<string | null> {
  const { event, intent, at } = input;
  if (event !== PAYMENT_INTENT_PAID) {
    return recordAlertEvent(db, {
      type: event,
      subject: intent.id,
      paymentIntentId: intent.id,
      payload: intentEventPayloadFromIntent(intent),
      at,
    });
  }
  // Unchanged since before ALERT_EVENTS: the body and the (type, payment_intent_id) guarantee.
  const alert = await db
    .insertInto('rewards.alerts')
    .values({
      id: randomUUID(),
      type: PAYMENT_INTENT_PAID,
      subject: intent.id,
      payment_intent_id: intent.id,
      payload: JSON.stringify(alertPayloadFromIntent(intent)),
      created_at: at,
      next_attempt_at: at,
    })
    .onConflict((conflict) => conflict.columns(['type', 'payment_intent_id']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return alert?.id ?? null;
}
