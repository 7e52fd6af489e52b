import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PAYMENT_INTENT_STATUSES, type PaymentIntentStatus } from '../../../src/records/payment-intent.js';
import { cannotAlertAtFirstSight, classifyTransition } from '../../../src/sync/intent-transitions.js';

const watching = new Date('2026-11-01T12:00:00Z');
const before = new Date('2026-11-01T11:00:00Z');
const after = new Date('2026-11-01T13:00:00Z');

describe('classifyTransition', () => {
  it.each<
    [PaymentIntentStatus | null, PaymentIntentStatus, Date | null, ReturnType<typeof classifyTransition>]
  >([
    // first sight: from_status null; paid alerts only when paid after watching began (no flood on import)
    [null, 'pending', null, { transition: { from: null, to: 'pending' } }],
    [null, 'paid', after, { transition: { from: null, to: 'paid' }, alert: true }],
    [null, 'paid', before, { transition: { from: null, to: 'paid' } }],
    [null, 'paid', watching, { transition: { from: null, to: 'paid' } }],
    [null, 'paid', null, { transition: { from: null, to: 'paid' } }],
    [null, 'canceled', null, { transition: { from: null, to: 'canceled' } }],
    [null, 'refunded', after, { transition: { from: null, to: 'refunded' } }],
    // seen paid after having been seen in another state: alert, whatever paid_at says
    ['pending', 'paid', before, { transition: { from: 'pending', to: 'paid' }, alert: true }],
    ['canceled', 'paid', after, { transition: { from: 'canceled', to: 'paid' }, alert: true }],
    ['pending', 'canceled', null, { transition: { from: 'pending', to: 'canceled' } }],
    ['paid', 'refunded', null, { transition: { from: 'paid', to: 'refunded' } }],
    ['pending', 'refunded', null, { transition: { from: 'pending', to: 'refunded' } }],
    // no change
    ['pending', 'pending', null, {}],
    ['paid', 'paid', after, {}],
    // stale reads: timestamps are only ever set, so these are old observations
    ['paid', 'pending', null, { stale: true }],
    ['refunded', 'paid', after, { stale: true }],
    ['canceled', 'pending', null, { stale: true }],
    ['paid', 'canceled', null, { stale: true }],
  ])('%s -> %s (paid_at %s)', (previous, status, paidAt, expected) => {
    expect(classifyTransition(previous, { status, paidAt }, watching)).toEqual(expected);
  });

  const status = fc.constantFrom(...PAYMENT_INTENT_STATUSES);
  const maybeDate = fc.option(fc.date({ noInvalidDate: true }), { nil: null });

  it('alerts only for an observed paid status, and only with a transition', () => {
    fc.assert(
      fc.property(
        fc.option(status, { nil: null }),
        status,
        maybeDate,
        fc.date({ noInvalidDate: true }),
        (previous, to, paidAt, since) => {
          const decision = classifyTransition(previous, { status: to, paidAt }, since);
          if (decision.alert) {
            expect(to).toBe('paid');
            expect(decision.transition).toEqual({ from: previous, to: 'paid' });
          }
          if (decision.transition) expect(decision.transition.to).toBe(to);
          expect(decision.stale === true && decision.transition !== undefined).toBe(false);
        },
      ),
    );
  });

  it('a sequence of observations records each target status at most once and alerts at most once', () => {
    // Status only moves forward, so replaying observations in order cannot produce a second alert.
    fc.assert(
      fc.property(fc.array(status, { maxLength: 12 }), (observations) => {
        let stored: PaymentIntentStatus | null = null;
        const targets: string[] = [];
        let alerts = 0;
        for (const to of observations) {
          const decision = classifyTransition(stored, { status: to, paidAt: after }, watching);
          if (decision.stale) continue;
          if (decision.transition) {
            targets.push(decision.transition.to);
            stored = decision.transition.to;
          }
          if (decision.alert) alerts++;
        }
        expect(new Set(targets).size).toBe(targets.length);
        expect(alerts).toBeLessThanOrEqual(1);
      }),
    );
  });
});

describe('cannotAlertAtFirstSight', () => {
  it('pending, canceled and refunded can be recorded from the list form', () => {
    for (const status of ['pending', 'canceled', 'refunded'] as const) {
      expect(cannotAlertAtFirstSight({ status, updatedAt: after }, watching)).toBe(true);
    }
  });
  it('paid needs the full form unless last updated before watching began', () => {
    expect(cannotAlertAtFirstSight({ status: 'paid', updatedAt: before }, watching)).toBe(true);
    expect(cannotAlertAtFirstSight({ status: 'paid', updatedAt: after }, watching)).toBe(false);
    expect(cannotAlertAtFirstSight({ status: 'paid', updatedAt: undefined }, watching)).toBe(false);
  });
});
