import type { PaymentIntent, PaymentIntentStatus } from '../records/payment-intent.js';
import { DEFAULT_ALERT_EVENTS, type AlertEventType } from './alert-events.js';
import { EVENT_OF_STATUS, intentEventFor } from './intent-events.js';
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
  /** The stored status, shown again: the list fields refreshed when they moved, counted as a poll. */
  | { kind: 'unchanged' }
  /** Older than what the warehouse holds: nothing. */
  | { kind: 'stale' }
  /**
   * A payment (of a pending intent, or first seen paid while watching): recorded and alerted from
   * the list form, completed with what the warehouse holds. `fullFormMissing`: payer and metadata
   * are not known yet; the stream reads the full form first only when its budget affords it. Also a
   * change that raises no event (recorded, no alert; its timestamp read later with the full form).
   */
  | {
      kind: 'record-from-list';
      intent: PaymentIntent;
      previous: PaymentIntentStatus | null;
      decision: IntentObservationDecision;
      fullFormMissing: boolean;
    }
  /** A first sight that may raise another event, or a change that raises one: the full form is fetched by id. */
  | { kind: 'fetch'; why: 'first-sight' | 'changed' };

export interface ListRouting {
  watchingSince: Date;
  events?: ReadonlySet<AlertEventType> | undefined;
  /** The payee the list was filtered by: the payee of every intent it shows. */
  payee?: string | undefined;
}

/**
 * Sorts one intent of a list page (docs/payment-intents.md, "One pass"). A payment never waits for
 * a by-id read: a pending intent now `paid`, or an unknown one first seen paid after watching began,
 * is recorded from the list form (paid_at = the list's updated_at: confirming sets paid_at and moves
 * updated_at in one write), with the same decision as any observation, whether or not the warehouse
 * holds its full form yet. Everything else the list cannot settle is fetched by id.
 */
export function routeListedIntent(
  listed: PaymentIntent,
  stored: StoredIntentView | undefined,
  context: ListRouting,
): ListedIntentRoute {
  const decide = { watchingSince: context.watchingSince, events: context.events };
  if (stored === undefined) {
    if (!mayRaiseAtFirstSight(listed, context)) return { kind: 'insert-from-list' };
    // Without updated_at the list cannot date the payment: only the full form's paid_at can.
    if (listed.status !== 'paid' || listed.updatedAt === undefined)
      return { kind: 'fetch', why: 'first-sight' };
    const intent = paidIntentFromList(listed, undefined, context.payee);
    const decision = decideIntentObservation({ ...decide, intent, previous: null });
    return { kind: 'record-from-list', intent, previous: null, decision, fullFormMissing: true };
  }
  if (stored.status === listed.status) return { kind: 'unchanged' };
  if (listed.status !== 'paid' || stored.status !== 'pending') {
    const decision = decideIntentObservation({ ...decide, intent: listed, previous: stored.status });
    if (decision.stale) return { kind: 'stale' };
    // A change that raises no event (a cancellation or refund whose type ALERT_EVENTS leaves out) is
    // recorded from the list form at once: its timestamp (canceled_at, refunded_at) is read later
    // with the full form. Until it is, the row would stay open and every round would read past it.
    if (decision.event === null && listed.status !== 'paid')
      return {
        kind: 'record-from-list',
        intent: completedFromList(listed, stored, context.payee),
        previous: stored.status,
        decision,
        fullFormMissing: false,
      };
    return { kind: 'fetch', why: 'changed' };
  }
  const intent = paidIntentFromList(listed, stored, context.payee);
  const decision = decideIntentObservation({ ...decide, intent, previous: stored.status });
  return {
    kind: 'record-from-list',
    intent,
    previous: stored.status,
    decision,
    fullFormMissing: !stored.hasFullForm,
  };
}

/** What a list look needs from the stored row to tell whether writing it changes anything. */
export interface StoredListFields {
  amountValue: string | null;
  amountCurrency: string | null;
  description: string | null;
  createdAt: Date | null;
  updatedAt: Date | null;
  /** When the poll schedule next wants a look; null: no longer scheduled. */
  nextPollAt: Date | null;
  lastPolledAt: Date | null;
}

/**
 * Whether a look that shows the stored status is written: when a field the list form carries moved;
 * when the poll schedule is due and either ends watching with this look (`stopsWatching`: expired
 * past the grace, watched too long) or was last written `writeEveryMs` ago (the pass's `unchangedLookWriteEveryMs`). Otherwise
 * nothing is written: a round re-reads every open intent every few seconds, and rewriting unchanged
 * rows at that rate would cost Postgres more than the reads (the schedule only decides what rounds
 * cannot reach, and when watching ends). Pure.
 */
export function listLookNeedsWrite(
  listed: PaymentIntent,
  stored: StoredListFields,
  look: { now: Date; stopsWatching: boolean; writeEveryMs: number },
): boolean {
  const now = look.now.getTime();
  const due = stored.nextPollAt !== null && stored.nextPollAt.getTime() <= now;
  if (due && look.stopsWatching) return true;
  if (due && (stored.lastPolledAt === null || now - stored.lastPolledAt.getTime() >= look.writeEveryMs))
    return true;
  return (
    listed.amount.value !== stored.amountValue ||
    listed.amount.currency.toLowerCase() !== stored.amountCurrency ||
    (listed.description !== undefined && listed.description !== stored.description) ||
    (listed.createdAt !== undefined && listed.createdAt.getTime() !== stored.createdAt?.getTime()) ||
    (listed.updatedAt !== undefined && listed.updatedAt.getTime() !== stored.updatedAt?.getTime())
  );
}

/**
 * Whether a first sight may raise an event: a payment (as before ALERT_EVENTS), or a cancellation
 * or refund of an enabled type that the list does not show as older than watching.
 */
function mayRaiseAtFirstSight(listed: PaymentIntent, context: ListRouting): boolean {
  if (listed.status === 'paid') return !cannotAlertAtFirstSight(listed, context.watchingSince);
  const type = EVENT_OF_STATUS[listed.status];
  if (type === undefined || context.events?.has(type) !== true) return false;
  return listed.updatedAt === undefined || listed.updatedAt.getTime() >= context.watchingSince.getTime();
}

/**
 * The list form of a payment, completed with what the warehouse holds of its full form (payer,
 * payee, metadata never change after creation); the payee of a filtered list when nothing is stored.
 */
function paidIntentFromList(
  listed: PaymentIntent,
  stored: StoredIntentView | undefined,
  payee: string | undefined,
): PaymentIntent {
  return {
    ...completedFromList(listed, stored, payee),
    ...(listed.updatedAt === undefined ? {} : { paidAt: listed.updatedAt }),
  };
}

/** The list form, completed with the fields only the full form carries that the warehouse holds. */
function completedFromList(
  listed: PaymentIntent,
  stored: StoredIntentView | undefined,
  payee: string | undefined,
): PaymentIntent {
  const payeeId = stored?.payeeAccountBalanceId ?? payee ?? null;
  return {
    ...listed,
    ...(stored?.payerAccountBalanceId == null ? {} : { payerAccountBalanceId: stored.payerAccountBalanceId }),
    ...(payeeId === null ? {} : { payeeAccountBalanceId: payeeId }),
    ...(stored?.metadata == null ? {} : { metadata: stored.metadata }),
  };
}
