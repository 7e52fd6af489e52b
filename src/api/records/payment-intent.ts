import { z } from 'zod';
import { recordParser, type RecordParser } from './parse.js';
import {
  compact,
  decimalMoneySchema,
  isoTimestampSchema,
  nullableIsoTimestampSchema,
  uuidSchema,
  type DecimalMoney,
} from './primitives.js';

// Status drives transition tracking and paid alerts, so an unknown value is a rejection (visible in
// `rejected_records`) rather than a guess.
export const PAYMENT_INTENT_STATUSES = ['pending', 'paid', 'canceled', 'refunded'] as const;
export type PaymentIntentStatus = (typeof PAYMENT_INTENT_STATUSES)[number];

/**
 * A payment intent in any of its forms:
 * - `full`: `GET /payment_intents/{id}`;
 * - `list`: `GET /payment_intents` items (id, amount, description, status, created_at, updated_at);
 * - `confirm` / `cancel`: the action responses (id, status, amount, and paid_at / canceled_at).
 * Fields the form does not carry are absent (never null), so a writer that updates only the present
 * fields never nulls what the full form gave.
 */
export interface PaymentIntent {
  form: 'full' | 'list' | 'confirm' | 'cancel';
  /** Lower-case UUID. */
  id: string;
  status: PaymentIntentStatus;
  /** Smallest-unit big-integer string; currency lower-case. */
  amount: DecimalMoney;
  description?: string;
  payerAccountBalanceId?: string;
  payeeAccountBalanceId?: string;
  expiresAt?: Date | null;
  canceledAt?: Date | null;
  paidAt?: Date | null;
  refundedAt?: Date | null;
  /** String key/value map. */
  metadata?: Record<string, string>;
  createdAt?: Date;
  updatedAt?: Date;
  /** The record as received. */
  raw: unknown;
}

/** A payment intent from `GET /payment_intents/{id}`: every field present. */
export type FullPaymentIntent = PaymentIntent & Required<Omit<PaymentIntent, 'raw'>> & { form: 'full' };

const actionFields = {
  id: uuidSchema,
  object: z.literal('payment_intent'),
  status: z.enum(PAYMENT_INTENT_STATUSES),
  amount: decimalMoneySchema,
};

const listFields = {
  ...actionFields,
  description: z.string(),
  created_at: isoTimestampSchema,
  updated_at: isoTimestampSchema,
};

const fullSchema = z.object({
  ...listFields,
  payer_account_balance_id: uuidSchema,
  payee_account_balance_id: uuidSchema,
  expires_at: nullableIsoTimestampSchema,
  canceled_at: nullableIsoTimestampSchema,
  paid_at: nullableIsoTimestampSchema,
  refunded_at: nullableIsoTimestampSchema,
  metadata: z.record(z.string(), z.string()),
});
const listSchema = z.object(listFields);
const confirmSchema = z.object({ ...actionFields, paid_at: nullableIsoTimestampSchema });
const cancelSchema = z.object({ ...actionFields, canceled_at: nullableIsoTimestampSchema });

type FullWire = z.output<typeof fullSchema>;
type PaymentIntentWire = z.output<z.ZodObject<typeof actionFields>> & {
  [K in keyof FullWire]?: FullWire[K] | undefined;
};

function toPaymentIntent(form: PaymentIntent['form'], w: PaymentIntentWire, raw: unknown): PaymentIntent {
  return {
    form,
    id: w.id,
    status: w.status,
    amount: { value: w.amount.value, currency: w.amount.currency },
    ...compact({
      description: w.description,
      payerAccountBalanceId: w.payer_account_balance_id,
      payeeAccountBalanceId: w.payee_account_balance_id,
      expiresAt: w.expires_at,
      canceledAt: w.canceled_at,
      paidAt: w.paid_at,
      refundedAt: w.refunded_at,
      metadata: w.metadata,
      createdAt: w.created_at,
      updatedAt: w.updated_at,
    }),
    raw,
  };
}

/** `GET /payment_intents/{id}`. */
export const parsePaymentIntent: RecordParser<FullPaymentIntent> = recordParser(
  fullSchema,
  (w, raw) => toPaymentIntent('full', w, raw) as FullPaymentIntent,
);

/** Items of `GET /payment_intents` (the list subset). */
export const parsePaymentIntentListItem: RecordParser<PaymentIntent> = recordParser(listSchema, (w, raw) =>
  toPaymentIntent('list', w, raw),
);

/** Response of `POST /payment_intents/{id}/confirm`. */
export const parsePaymentIntentConfirmResponse: RecordParser<PaymentIntent> = recordParser(
  confirmSchema,
  (w, raw) => toPaymentIntent('confirm', w, raw),
);

/** Response of `POST /payment_intents/{id}/cancel`. */
export const parsePaymentIntentCancelResponse: RecordParser<PaymentIntent> = recordParser(
  cancelSchema,
  (w, raw) => toPaymentIntent('cancel', w, raw),
);
