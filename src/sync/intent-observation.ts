import type { PaymentIntent, PaymentIntentStatus } from '../records/payment-intent.js';
import { DEFAULT_ALERT_EVENTS, type AlertEventType } from './alert-events.js';
import { intentEventFor } from './intent-events.js';
import { cannotAlertAtFirstSight, classifyTransition } from './intent-transitions.js';

const PAID_ONLY: ReadonlySet<AlertEventType> = new Set(DEFAULT_ALERT_EVENTS);

/**
 * What recording one observation of an intent means, decided once (docs/payment-intents.md, "When an
 * alert is raised"): nothing when it is a stale read; else the transition to record (none when the
 * status did not move) and the event to raise (none, paid, canceled or refunded). The writer applies
 * it in one transaction; the unique indexes keep the event to one per (type, intent) even so.
 */
export interface IntentObservationDecision {
  stale: boolean;
  transition: { from: PaymentIntentStatus | null; to: PaymentIntentStatus } | undefined;
  event: AlertEventType | null;
}

export interface IntentObservation {
  /** The full form, what validated of it (`salvaged`), or a list form completed from the warehouse. */
  intent: PaymentIntent;
  /** The status stored before this observation; null when the warehouse does not hold the intent. */
  previous: PaymentIntentStatus | null;
  watchingSince: Date;
  /** ALERT_EVENTS; `payment_intent.paid` alone when not given. */
  events?: ReadonlySet<AlertEventType> | undefined;
}

/** classifyTransition for the status and transition, intentEventFor for the event. Pure. */
export function decideIntentObservation(observation: IntentObservation): IntentObservationDecision {
  const { intent, previous, watchingSince } = observation;
  const decision = classifyTransition(
    previous,
    { status: intent.status, paidAt: paidAtForDecision(intent) },
    watchingSince,
  );
  if (decision.stale === true) return { stale: true, transition: undefined, event: null };
  return {
    stale: false,
    transition: decision.transition,
    event: intentEventFor(decision, intent, watchingSince, observation.events ?? PAID_ONLY),
  };
}

/**
 * A salvaged form may have lost `paid_at`; its `updated_at` (set with every state timestamp, so at or
 * after paid_at) stands in when deciding a first-sight alert: a payment seen paid is not left silent.
 */
function paidAtForDecision(intent: PaymentIntent): Date | null | undefined {
  if (intent.form === 'salvaged' && intent.paidAt === undefined) return intent.updatedAt;
  return intent.paidAt;
}

/** What the warehouse holds of an intent, as far as sorting its list form needs it. */
export interface StoredIntentView {
  status: PaymentIntentStatus;
  /** Whether the full form was ever written (the list form carries no payer). */
  hasFullForm: boolean;
  /** Fields only the full form carries and that never change after creation. */
  payerAccountBalanceId: string | null;
  payeeAccountBalanceId: string | null;
  metadata: Record<string, string> | null;
}

/** Where one intent of a list page goes. */
export type ListedIntentRoute =
  /** Unknown, and cannot alert at first sight: inserted from the list form. */
  | { kind: 'insert-from-list' }
  /** The stored status, shown again: the list fields refreshed, counted as a poll. */
  | { kind: 'unchanged' }
  /** Older than what the warehouse holds: nothing. */
  | { kind: 'stale' }
  /** A payment of an intent whose full form is stored: recorded and alerted from the list form. */
  | {
      kind: 'record-from-list';
      intent: PaymentIntent;
      previous: PaymentIntentStatus;
      decision: IntentObservationDecision;
    }
  /** A first sight that may alert, or any other change: the full form is fetched by id. */
  | { kind: 'fetch'; why: 'first-sight' | 'changed' };

/**
 * Sorts one intent of a list page (docs/payment-intents.md, "One pass"): a pending intent now `paid`
 * whose full form the warehouse holds is recorded from the list form at once (paid_at = the list's
 * updated_at: confirming sets paid_at and moves updated_at in one write), with the same decision as
 * any observation; everything else the list cannot settle is fetched by id.
 */
export function routeListedIntent(
  listed: PaymentIntent,
  stored: StoredIntentView | undefined,
  context: { watchingSince: Date; events?: ReadonlySet<AlertEventType> | undefined },
): ListedIntentRoute {
  if (stored === undefined)
    return mayRaiseAtFirstSight(listed, context)
      ? { kind: 'fetch', why: 'first-sight' }
      : { kind: 'insert-from-list' };
  if (stored.status === listed.status) return { kind: 'unchanged' };
  if (listed.status !== 'paid' || stored.status !== 'pending' || !stored.hasFullForm) {
    const decision = decideIntentObservation({ ...context, intent: listed, previous: stored.status });
    return decision.stale ? { kind: 'stale' } : { kind: 'fetch', why: 'changed' };
  }
  const intent = paidIntentFromList(listed, stored);
  const decision = decideIntentObservation({ ...context, intent, previous: stored.status });
  return { kind: 'record-from-list', intent, previous: stored.status, decision };
}

/**
 * Whether a first sight may raise an event, so its full form (which has the state's timestamp) must
 * be read before it is recorded: a payment (as before ALERT_EVENTS), or a cancellation or refund of
 * an enabled type that the list does not show as older than watching.
 */
function mayRaiseAtFirstSight(
  listed: PaymentIntent,
  context: { watchingSince: Date; events?: ReadonlySet<AlertEventType> | undefined },
): boolean {
  if (listed.status === 'paid') return !cannotAlertAtFirstSight(listed, context.watchingSince);
  const type = EVENT_OF_STATUS[listed.status];
  if (type === undefined || context.events?.has(type) !== true) return false;
  return listed.updatedAt === undefined || listed.updatedAt.getTime() >= context.watchingSince.getTime();
}

const EVENT_OF_STATUS: Partial<Record<PaymentIntent['status'], AlertEventType>> = {
  canceled: 'payment_intent.canceled',
  refunded: 'payment_intent.refunded',
};

/** The list form of a payment, completed with what the warehouse holds of its full form. */
function paidIntentFromList(listed: PaymentIntent, stored: StoredIntentView): PaymentIntent {
  return {
    ...listed,
    ...(listed.updatedAt === undefined ? {} : { paidAt: listed.updatedAt }),
    ...(stored.payerAccountBalanceId === null ? {} : { payerAccountBalanceId: stored.payerAccountBalanceId }),
    ...(stored.payeeAccountBalanceId === null ? {} : { payeeAccountBalanceId: stored.payeeAccountBalanceId }),
    ...(stored.metadata === null ? {} : { metadata: stored.metadata }),
  };
}
