import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ALERT_EVENT_TYPES, type AlertEventType } from '../../../src/sync/alert-events.js';
import type { PaymentIntentStatus } from '../../../src/records/payment-intent.js';
import { intentEventFor } from '../../../src/sync/intent-events.js';
import { classifyTransition } from '../../../src/sync/intent-transitions.js';

const WATCHING = new Date('2026-11-01T00:00:00Z');
const BEFORE = new Date('2026-10-01T00:00:00Z');
const AFTER = new Date('2026-11-02T00:00:00Z');
const ALL = new Set<AlertEventType>(ALERT_EVENT_TYPES);
const PAID_ONLY = new Set<AlertEventType>(['payment_intent.paid']);

function eventFor(
  previous: PaymentIntentStatus | null,
  to: PaymentIntentStatus,
  at: { paidAt?: Date | null; canceledAt?: Date | null; refundedAt?: Date | null },
  enabled: ReadonlySet<AlertEventType> = ALL,
) {
  const decision = classifyTransition(previous, { status: to, paidAt: at.paidAt }, WATCHING);
  return intentEventFor(decision, at, WATCHING, enabled);
}

describe('which event an intent observation raises (ALERT_EVENTS)', () => {
  it.each([
    ['pending -> paid: paid', 'pending', 'paid', { paidAt: AFTER }, 'payment_intent.paid'],
    [
      'pending -> canceled: canceled',
      'pending',
      'canceled',
      { canceledAt: AFTER },
      'payment_intent.canceled',
    ],
    ['paid -> refunded: refunded', 'paid', 'refunded', { refundedAt: AFTER }, 'payment_intent.refunded'],
    [
      'pending -> refunded between polls: refunded, never paid',
      'pending',
      'refunded',
      {},
      'payment_intent.refunded',
    ],
    [
      'first seen canceled after watching began',
      null,
      'canceled',
      { canceledAt: AFTER },
      'payment_intent.canceled',
    ],
    [
      'first seen canceled before watching began: nothing (history)',
      null,
      'canceled',
      { canceledAt: BEFORE },
      null,
    ],
    ['first seen refunded before watching began: nothing', null, 'refunded', { refundedAt: BEFORE }, null],
    ['first seen pending: nothing', null, 'pending', {}, null],
    ['no change: nothing', 'canceled', 'canceled', { canceledAt: AFTER }, null],
    ['a stale read (paid seen pending): nothing', 'paid', 'pending', {}, null],
  ] as const)('%s', (_rule, previous, to, at, expected) => {
    expect(eventFor(previous, to, at)).toBe(expected);
  });

  it('the default (paid only) raises exactly what classifyTransition alerted before ALERT_EVENTS', () => {
    const statuses = ['pending', 'paid', 'canceled', 'refunded'] as const;
    fc.assert(
      fc.property(
        fc.constantFrom(null, ...statuses),
        fc.constantFrom(...statuses),
        fc.option(fc.constantFrom(BEFORE, AFTER), { nil: null }),
        (previous, to, paidAt) => {
          const decision = classifyTransition(previous, { status: to, paidAt }, WATCHING);
          const event = intentEventFor(
            decision,
            { canceledAt: AFTER, refundedAt: AFTER },
            WATCHING,
            PAID_ONLY,
          );
          expect(event).toBe(decision.alert === true ? 'payment_intent.paid' : null);
        },
      ),
    );
  });

  it('a type left out of ALERT_EVENTS is never raised', () => {
    const withoutCanceled = new Set(ALERT_EVENT_TYPES.filter((t) => t !== 'payment_intent.canceled'));
    expect(eventFor('pending', 'canceled', { canceledAt: AFTER }, withoutCanceled)).toBeNull();
    const withoutPaid = new Set(ALERT_EVENT_TYPES.filter((t) => t !== 'payment_intent.paid'));
    expect(eventFor('pending', 'paid', { paidAt: AFTER }, withoutPaid)).toBeNull();
  });
});
