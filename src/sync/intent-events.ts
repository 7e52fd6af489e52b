import type { AlertEventType } from './alert-events.js';
import type { PaymentIntent } from '../records/payment-intent.js';
import type { TransitionDecision } from './intent-transitions.js';

/**
 * Which webhook event, if any, one recorded observation of an intent raises (docs/payment-intents.md,
 * "Events"). Pure. The database still keeps it to one per (type, intent).
 *
 * - `payment_intent.paid`: exactly as before ALERT_EVENTS existed (classifyTransition's `alert`).
 * - `payment_intent.canceled` / `payment_intent.refunded`: the intent was seen moving into that state
 *   from another one, or was first seen in it with the state's timestamp after `watchingSince`
 *   (importing old history raises no flood, as for paid). The spec shows no move into `refunded`:
 *   it is observed as the list or the full form shows it (a paid intent later listed `refunded`).
 * - An event type ALERT_EVENTS does not list is never raised.
 */
export function intentEventFor(
  decision: TransitionDecision,
  intent: Pick<PaymentIntent, 'canceledAt' | 'refundedAt'>,
  watchingSince: Date,
  enabled: ReadonlySet<AlertEventType>,
): AlertEventType | null {
  if (decision.alert === true) return enabled.has('payment_intent.paid') ? 'payment_intent.paid' : null;
  const transition = decision.transition;
  if (transition === undefined) return null;
  const type = EVENT_OF_STATUS[transition.to] ?? null;
  if (type === null || !enabled.has(type)) return null;
  if (transition.from !== null) return type;
  const at = transition.to === 'canceled' ? intent.canceledAt : intent.refundedAt;
  return at instanceof Date && at.getTime() > watchingSince.getTime() ? type : null;
}

/**
 * The event a move into each state raises, paid apart (classifyTransition's `alert` decides it):
 * the one map of states to events, which the list's first-sight routing reads too.
 */
export const EVENT_OF_STATUS: Partial<Record<PaymentIntent['status'], AlertEventType>> = {
  canceled: 'payment_intent.canceled',
  refunded: 'payment_intent.refunded',
};
