import type { PaymentIntentStatus } from '../records/payment-intent.js';

/**
 * What one observation of a payment intent means for the warehouse: a transition to record, an
 * alert to raise, or nothing. Pure; the writer applies the answer in one transaction.
 */
export interface TransitionDecision {
  transition?: { from: PaymentIntentStatus | null; to: PaymentIntentStatus };
  /** Raise the `payment_intent.paid` alert (the database still guarantees at most one per intent). */
  alert?: boolean;
  /**
   * The observation is older than what we already hold (a list page read before the change, or a
   * lagging replica); see STATUS_RANK. The writer keeps the stored status.
   */
  stale?: true;
}

export interface ObservedStatus {
  status: PaymentIntentStatus;
  /** `paid_at` of the full form; absent when the observation came from a form without it. */
  paidAt?: Date | null | undefined;
}

/**
 * Status is derived from timestamps that are only ever set, never cleared: refunded_at outranks
 * paid_at, which outranks canceled_at/expiry (a paid intent cannot be canceled, spec: States). So the
 * derived status only climbs this order; an observation lower than what we hold is a stale read (a
 * list page fetched before the change), and the order has no cycles, so each status is entered once.
 */
const STATUS_RANK: Record<PaymentIntentStatus, number> = { pending: 0, canceled: 1, paid: 2, refunded: 3 };

/**
 * docs/payment-intents.md, "When an alert is raised": alert when an intent is seen `paid` after having been seen in another state,
 * or is first seen already `paid` with a `paid_at` later than the moment the pipeline began watching
 * (`watchingSince`), so that importing old history raises no flood. An intent first seen `refunded`
 * (or going `pending` -> `refunded` between two polls) was never *seen* paid: no alert.
 */
export function classifyTransition(
  previous: PaymentIntentStatus | null,
  observed: ObservedStatus,
  watchingSince: Date,
): TransitionDecision {
  const to = observed.status;
  if (previous === null) {
    const paidAt = observed.paidAt;
    const paidWhileWatching =
      to === 'paid' && paidAt instanceof Date && paidAt.getTime() > watchingSince.getTime();
    return { transition: { from: null, to }, ...(paidWhileWatching ? { alert: true } : {}) };
  }
  if (previous === to) return {};
  if (STATUS_RANK[to] < STATUS_RANK[previous]) return { stale: true };
  return { transition: { from: previous, to }, ...(to === 'paid' ? { alert: true } : {}) };
}

/** Statuses after which an intent is no longer polled by id. */
export function isTerminalStatus(status: PaymentIntentStatus): boolean {
  // `paid` can still become `refunded`, but a per-id schedule for every paid intent would grow
  // without bound: refunds are caught by the list sweeps (head sweep every pass, full sweep now and then).
  return status !== 'pending';
}

/**
 * Whether a first sight in the list form (no `paid_at`) can be recorded without the full form.
 * Only `paid` can alert at first sight, and only with `paid_at` after `watchingSince`; `updated_at`
 * moves whenever one of the state timestamps is set, so `updated_at` before `watchingSince` bounds
 * `paid_at` too. This is what lets the first pass import a long history for pages, not one request
 * per historical intent.
 */
export function cannotAlertAtFirstSight(
  listed: { status: PaymentIntentStatus; updatedAt?: Date | undefined },
  watchingSince: Date,
): boolean {
  if (listed.status !== 'paid') return true;
  return listed.updatedAt !== undefined && listed.updatedAt.getTime() < watchingSince.getTime();
}
