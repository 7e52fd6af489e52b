import fc from 'fast-check';
import { INTENT_PASS_TUNING } from '../../../src/streams/payment-intents/tuning.js';
import { describe, expect, it } from 'vitest';
import {
  PAYMENT_INTENT_STATUSES,
  type PaymentIntent,
  type PaymentIntentStatus,
} from '../../../src/records/payment-intent.js';
import type { DecimalString } from '../../../src/records/primitives.js';
import { ALERT_EVENT_TYPES, type AlertEventType } from '../../../src/sync/alert-events.js';
import {
  decideIntentObservation,
  listLookNeedsWrite,
  routeListedIntent,
  type StoredIntentView,
} from '../../../src/sync/intent-observation.js';

const WATCHING = new Date('2026-11-01T12:00:00Z');
const BEFORE = new Date('2026-11-01T11:00:00Z');
const AFTER = new Date('2026-11-01T13:00:00Z');
const ALL = new Set<AlertEventType>(ALERT_EVENT_TYPES);
const PAYER = '00000000-0000-4000-8000-00000000000a';
const PAYEE = '00000000-0000-4000-8000-00000000000b';

function intent(
  form: PaymentIntent['form'],
  status: PaymentIntentStatus,
  extra: Partial<PaymentIntent> = {},
): PaymentIntent {
  return {
    form,
    id: '00000000-0000-4000-8000-000000000001',
    status,
    amount: { value: '1000' as DecimalString, currency: 'usd' },
    raw: {},
    ...extra,
  };
}

const stored = (status: PaymentIntentStatus, hasFullForm = true): StoredIntentView => ({
  status,
  hasFullForm,
  payerAccountBalanceId: hasFullForm ? PAYER : null,
  payeeAccountBalanceId: hasFullForm ? PAYEE : null,
  metadata: hasFullForm ? { order: '42' } : null,
});

describe('decideIntentObservation: one decision per observation (docs/payment-intents.md, "When an alert is raised")', () => {
  it.each([
    [
      'pending -> paid: the transition and the paid event',
      'pending',
      intent('full', 'paid', { paidAt: BEFORE }),
      { stale: false, transition: { from: 'pending', to: 'paid' }, event: 'payment_intent.paid' },
    ],
    [
      'first seen paid after watching began: paid',
      null,
      intent('full', 'paid', { paidAt: AFTER }),
      { stale: false, transition: { from: null, to: 'paid' }, event: 'payment_intent.paid' },
    ],
    [
      'first seen paid before watching began: history, no event',
      null,
      intent('full', 'paid', { paidAt: BEFORE }),
      { stale: false, transition: { from: null, to: 'paid' }, event: null },
    ],
    [
      'a salvaged form without paid_at: updated_at stands in',
      null,
      intent('salvaged', 'paid', { updatedAt: AFTER }),
      { stale: false, transition: { from: null, to: 'paid' }, event: 'payment_intent.paid' },
    ],
    [
      'a full form without paid_at: no stand-in, no event',
      null,
      intent('full', 'paid', { updatedAt: AFTER }),
      { stale: false, transition: { from: null, to: 'paid' }, event: null },
    ],
    [
      'pending -> canceled: canceled',
      'pending',
      intent('full', 'canceled', { canceledAt: AFTER }),
      { stale: false, transition: { from: 'pending', to: 'canceled' }, event: 'payment_intent.canceled' },
    ],
    [
      'no change: nothing to record but the row',
      'paid',
      intent('full', 'paid', { paidAt: AFTER }),
      { stale: false, transition: undefined, event: null },
    ],
    [
      'a stale read: nothing',
      'paid',
      intent('full', 'pending'),
      { stale: true, transition: undefined, event: null },
    ],
  ] as const)('%s', (_rule, previous, observed, expected) => {
    expect(
      decideIntentObservation({ intent: observed, previous, watchingSince: WATCHING, events: ALL }),
    ).toEqual(expected);
  });

  it('without ALERT_EVENTS given, paid alone is raised', () => {
    const canceled = intent('full', 'canceled', { canceledAt: AFTER });
    expect(
      decideIntentObservation({ intent: canceled, previous: 'pending', watchingSince: WATCHING }).event,
    ).toBeNull();
    const paid = intent('full', 'paid', { paidAt: AFTER });
    expect(
      decideIntentObservation({ intent: paid, previous: 'pending', watchingSince: WATCHING }).event,
    ).toBe('payment_intent.paid');
  });
});

describe('routeListedIntent: where one intent of a list page goes', () => {
  const route = (listed: PaymentIntent, row: StoredIntentView | undefined) =>
    routeListedIntent(listed, row, { watchingSince: WATCHING, events: ALL });

  it('an unknown canceled intent is inserted from the list when its event is not in ALERT_EVENTS', () => {
    const canceled = intent('list', 'canceled', { updatedAt: AFTER });
    const paidOnly = new Set<AlertEventType>(['payment_intent.paid']);
    expect(routeListedIntent(canceled, undefined, { watchingSince: WATCHING, events: paidOnly }).kind).toBe(
      'insert-from-list',
    );
    expect(routeListedIntent(canceled, undefined, { watchingSince: WATCHING }).kind).toBe('insert-from-list');
  });

  it.each([
    [
      'unknown pending: inserted from the list form',
      intent('list', 'pending'),
      undefined,
      'insert-from-list',
    ],
    [
      'unknown paid, updated before watching began: inserted from the list form',
      intent('list', 'paid', { updatedAt: BEFORE }),
      undefined,
      'insert-from-list',
    ],
    [
      'unknown paid, updated after watching began: recorded and alerted from the list form at once',
      intent('list', 'paid', { updatedAt: AFTER }),
      undefined,
      'record-from-list',
    ],
    [
      'unknown paid without updated_at: its full form is fetched (only paid_at can date the payment)',
      intent('list', 'paid'),
      undefined,
      'fetch',
    ],
    [
      'unknown canceled, updated after watching began: its full form is fetched (canceled_at decides the event)',
      intent('list', 'canceled', { updatedAt: AFTER }),
      undefined,
      'fetch',
    ],
    [
      'unknown refunded, updated after watching began: its full form is fetched',
      intent('list', 'refunded', { updatedAt: AFTER }),
      undefined,
      'fetch',
    ],
    [
      'unknown canceled, updated before watching began: inserted from the list form (history raises nothing)',
      intent('list', 'canceled', { updatedAt: BEFORE }),
      undefined,
      'insert-from-list',
    ],
    ['the stored status again: unchanged', intent('list', 'pending'), stored('pending'), 'unchanged'],
    ['older than the stored status: stale', intent('list', 'pending'), stored('paid'), 'stale'],
    [
      'paid, but the full form was never stored: recorded from the list all the same (no by-id wait)',
      intent('list', 'paid', { updatedAt: AFTER }),
      stored('pending', false),
      'record-from-list',
    ],
    [
      'canceled: fetched (its body needs canceled_at)',
      intent('list', 'canceled'),
      stored('pending'),
      'fetch',
    ],
    [
      'paid after canceled: fetched',
      intent('list', 'paid', { updatedAt: AFTER }),
      stored('canceled'),
      'fetch',
    ],
    [
      'pending -> paid with the full form stored: recorded from the list',
      intent('list', 'paid', { updatedAt: AFTER }),
      stored('pending'),
      'record-from-list',
    ],
  ] as const)('%s', (_rule, listed, row, kind) => {
    expect(route(listed, row).kind).toBe(kind);
  });

  it('a payment recorded from the list form: paid_at is the list updated_at, the rest from the stored full form', () => {
    const result = route(intent('list', 'paid', { updatedAt: AFTER }), stored('pending'));
    expect(result).toMatchObject({
      kind: 'record-from-list',
      previous: 'pending',
      intent: {
        status: 'paid',
        paidAt: AFTER,
        payerAccountBalanceId: PAYER,
        payeeAccountBalanceId: PAYEE,
        metadata: { order: '42' },
      },
      decision: { stale: false, transition: { from: 'pending', to: 'paid' }, event: 'payment_intent.paid' },
    });
  });

  it('a payment whose full form was never read: payer and metadata unknown, the payee of the filtered list, marked fullFormMissing', () => {
    const listed = intent('list', 'paid', { updatedAt: AFTER });
    const unknown = routeListedIntent(listed, undefined, { watchingSince: WATCHING, payee: PAYEE });
    expect(unknown).toMatchObject({
      kind: 'record-from-list',
      previous: null,
      fullFormMissing: true,
      intent: { status: 'paid', paidAt: AFTER, payeeAccountBalanceId: PAYEE },
      decision: { transition: { from: null, to: 'paid' }, event: 'payment_intent.paid' },
    });
    if (unknown.kind !== 'record-from-list') throw new Error('unreachable');
    expect(unknown.intent.payerAccountBalanceId).toBeUndefined();
    expect(unknown.intent.metadata).toBeUndefined();
    expect(route(listed, stored('pending'))).toMatchObject({ fullFormMissing: false });
    expect(route(listed, stored('pending', false))).toMatchObject({
      fullFormMissing: true,
      previous: 'pending',
    });
  });

  it('a cancellation or refund whose event ALERT_EVENTS leaves out: recorded from the list at once, no event, its timestamp read later', () => {
    const paidOnly = new Set<AlertEventType>(['payment_intent.paid']);
    const canceled = routeListedIntent(intent('list', 'canceled', { updatedAt: AFTER }), stored('pending'), {
      watchingSince: WATCHING,
      events: paidOnly,
    });
    expect(canceled).toMatchObject({
      kind: 'record-from-list',
      previous: 'pending',
      fullFormMissing: false,
      intent: { status: 'canceled', payerAccountBalanceId: PAYER },
      decision: { transition: { from: 'pending', to: 'canceled' }, event: null },
    });
    if (canceled.kind !== 'record-from-list') throw new Error('unreachable');
    expect(canceled.intent.canceledAt).toBeUndefined();
    const refunded = routeListedIntent(intent('list', 'refunded'), stored('paid'), {
      watchingSince: WATCHING,
      events: paidOnly,
    });
    expect(refunded).toMatchObject({ kind: 'record-from-list', decision: { event: null } });
  });

  it('first sights and changes are fetched for the reason the pass logs', () => {
    expect(route(intent('list', 'canceled', { updatedAt: AFTER }), undefined)).toEqual({
      kind: 'fetch',
      why: 'first-sight',
    });
    expect(route(intent('list', 'refunded'), stored('paid'))).toEqual({ kind: 'fetch', why: 'changed' });
  });
});

// A model of one intent in the warehouse, driven by any sequence of observations through the pass's
// decisions alone (no unique index to catch a second alert): what the exactly-once guarantee rests on.
const status = fc.constantFrom(...PAYMENT_INTENT_STATUSES);
const when = fc.constantFrom(BEFORE, AFTER);
const observation = fc.record({
  form: fc.constantFrom('list' as const, 'full' as const, 'salvaged' as const),
  status,
  paidAt: fc.option(when, { nil: undefined }),
  canceledAt: fc.option(when, { nil: undefined }),
  refundedAt: fc.option(when, { nil: undefined }),
  updatedAt: fc.option(when, { nil: undefined }),
});
type Observed = typeof observation extends fc.Arbitrary<infer T> ? T : never;

function replay(observations: readonly Observed[], events: ReadonlySet<AlertEventType>) {
  let row: StoredIntentView | undefined;
  const raised: AlertEventType[] = [];
  let seenPaid = false;
  const apply = (to: PaymentIntentStatus, fullForm: boolean) => {
    row = fullForm || row?.hasFullForm === true ? stored(to) : stored(to, false);
  };
  for (const seen of observations) {
    const { form, ...fields } = seen;
    const observed = intent(
      form,
      seen.status,
      Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)),
    );
    if (form === 'list') {
      const route = routeListedIntent(observed, row, { watchingSince: WATCHING, events });
      if (route.kind === 'insert-from-list') apply(observed.status, false);
      if (route.kind !== 'record-from-list') continue;
      if (route.decision.event !== null) raised.push(route.decision.event);
      seenPaid ||= route.intent.status === 'paid';
      apply(route.intent.status, !route.fullFormMissing);
      continue;
    }
    const decision = decideIntentObservation({
      intent: observed,
      previous: row?.status ?? null,
      watchingSince: WATCHING,
      events,
    });
    if (decision.stale) continue;
    seenPaid ||= observed.status === 'paid';
    if (decision.event === 'payment_intent.paid') expect(seenPaid).toBe(true);
    if (decision.event !== null) raised.push(decision.event);
    apply(observed.status, true);
  }
  return raised;
}

describe('exactly once, whatever the sequence of observed states', () => {
  it('at most one event of each type per intent (so at most one paid alert), list and full forms mixed', () => {
    fc.assert(
      fc.property(fc.array(observation, { maxLength: 16 }), (observations) => {
        const raised = replay(observations, ALL);
        expect(raised.filter((type) => type === 'payment_intent.paid').length).toBeLessThanOrEqual(1);
        expect(new Set(raised).size).toBe(raised.length);
      }),
    );
  });

  it('by default (ALERT_EVENTS unset) only paid alerts, at most one', () => {
    fc.assert(
      fc.property(fc.array(observation, { maxLength: 16 }), (observations) => {
        const raised = replay(observations, new Set(['payment_intent.paid']));
        expect(raised.every((type) => type === 'payment_intent.paid')).toBe(true);
        expect(raised.length).toBeLessThanOrEqual(1);
      }),
    );
  });

  it.each(['list', 'full'] as const)(
    'a payment seen after its pending state alerts once (%s form)',
    (form) => {
      const quiet = { paidAt: undefined, canceledAt: undefined, refundedAt: undefined, updatedAt: BEFORE };
      const pending = { ...quiet, form: 'full' as const, status: 'pending' as const };
      const paid = { ...quiet, form, status: 'paid' as const, paidAt: BEFORE };
      expect(replay([pending, paid, paid], new Set(['payment_intent.paid']))).toEqual([
        'payment_intent.paid',
      ]);
    },
  );
});

describe('listLookNeedsWrite: unchanged looks are not rewritten', () => {
  const NOW = new Date('2026-11-01T14:00:00Z');
  const ago = (ms: number) => new Date(NOW.getTime() - ms);
  const listed = intent('list', 'pending', { description: 'coffee', createdAt: BEFORE, updatedAt: AFTER });
  const row = {
    amountValue: '1000',
    amountCurrency: 'usd',
    description: 'coffee',
    createdAt: BEFORE,
    updatedAt: AFTER,
    nextPollAt: new Date(NOW.getTime() + 60_000),
    lastPolledAt: ago(5_000),
  };
  const writeEveryMs = INTENT_PASS_TUNING.unchangedLookWriteEveryMs;
  const look = { now: NOW, stopsWatching: false, writeEveryMs };
  it('the same fields, poll not due: nothing written', () => {
    expect(listLookNeedsWrite(listed, row, look)).toBe(false);
    expect(listLookNeedsWrite(listed, { ...row, nextPollAt: null }, look)).toBe(false);
  });
  it('due, written a moment ago: nothing written (a round looks every few seconds)', () => {
    expect(listLookNeedsWrite(listed, { ...row, nextPollAt: NOW }, look)).toBe(false);
  });
  it('due and last written a minute ago, or due and this look ends watching: written', () => {
    const due = { ...row, nextPollAt: NOW };
    expect(listLookNeedsWrite(listed, { ...due, lastPolledAt: ago(writeEveryMs) }, look)).toBe(true);
    expect(listLookNeedsWrite(listed, { ...due, lastPolledAt: null }, look)).toBe(true);
    expect(listLookNeedsWrite(listed, due, { ...look, stopsWatching: true })).toBe(true);
    expect(listLookNeedsWrite(listed, row, { ...look, stopsWatching: true })).toBe(false);
  });
  it.each([
    ['amount', { amountValue: '999' }],
    ['currency', { amountCurrency: 'eur' }],
    ['description', { description: 'tea' }],
    ['created_at', { createdAt: null }],
    ['updated_at', { updatedAt: BEFORE }],
  ])('a list field moved (%s): written', (_field, change) => {
    expect(listLookNeedsWrite(listed, { ...row, ...change }, look)).toBe(true);
  });
});
