import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  parsePaymentIntent,
  parsePaymentIntentListItem,
  salvagePaymentIntent,
  type PaymentIntent,
} from '../../../src/records/payment-intent.js';
import { unstorableReason } from '../../../src/records/storable.js';
import * as fx from './fixtures.js';

const listed = (): PaymentIntent => {
  const result = parsePaymentIntentListItem({ ...fx.listPaymentIntent(), status: 'paid' });
  if (!result.ok) throw new Error(result.rejection.reason);
  return result.record;
};
const id = String(fx.fullPaymentIntent()['id']);

describe('salvagePaymentIntent: what validates of a full form that failed', () => {
  it('keeps every valid field and drops only the bad one', () => {
    const raw = {
      ...fx.fullPaymentIntent(),
      status: 'paid',
      paid_at: '2024-05-01T18:30:00Z',
      metadata: { n: 1 },
    };
    expect(parsePaymentIntent(raw).ok).toBe(false);
    const salvaged = salvagePaymentIntent(id, raw, listed());
    expect(salvaged).toMatchObject({
      form: 'salvaged',
      id,
      status: 'paid',
      paidAt: new Date('2024-05-01T18:30:00Z'),
      payerAccountBalanceId: fx.fullPaymentIntent()['payer_account_balance_id'],
      expiresAt: new Date('2024-05-01T19:00:00Z'),
    });
    expect(salvaged).not.toHaveProperty('metadata');
  });

  it('status and amount fall back to the list form; without either form, nothing is salvaged', () => {
    const raw = { ...fx.fullPaymentIntent(), status: 'settled', amount: { value: 1.5, currency: 'x' } };
    expect(salvagePaymentIntent(id, raw, listed())).toMatchObject({
      status: 'paid',
      amount: listed().amount,
      description: 'Dinner',
    });
    expect(salvagePaymentIntent(id, raw, undefined)).toBeNull();
    expect(salvagePaymentIntent(id, 'not an object', undefined)).toBeNull();
  });

  it('the id is the one asked for, whatever the payload says', () => {
    const raw = { ...fx.fullPaymentIntent(), id: 'someone-else', metadata: null };
    expect(salvagePaymentIntent(id, raw, listed())?.id).toBe(id);
  });

  it('property: whatever replaces a field, the result holds only values that validate and store', () => {
    const keys = Object.keys(fx.fullPaymentIntent());
    fc.assert(
      fc.property(
        fc.constantFrom(...keys),
        fc.jsonValue(),
        fc.constantFrom('\u0000', '\ud800', 'ok'),
        (key, value, text) => {
          const raw = { ...fx.fullPaymentIntent(), [key]: value, description: `x${text}` };
          const salvaged = salvagePaymentIntent(id, raw, listed());
          expect(salvaged).not.toBeNull();
          expect(unstorableReason(salvaged!.description ?? '')).toBeNull();
          expect(unstorableReason(salvaged!.metadata ?? {})).toBeNull();
          expect(['pending', 'paid', 'canceled', 'refunded']).toContain(salvaged!.status);
          expect(salvaged!.amount.value).toMatch(/^\d+$/);
        },
      ),
      { numRuns: 300 },
    );
  });
});
