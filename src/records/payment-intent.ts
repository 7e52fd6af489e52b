import { z } from 'zod';
import { recordParser, type RecordParser } from './parse.js';
import { unstorableReason } from './storable.js';
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
 * - `confirm` / `cancel`: the action responses (id, status, amount, and paid_at / canceled_at);
 * - `salvaged`: the fields of a full form that failed validation which validate on their own.
 * Fields the form does not carry are absent (never null), so a writer that updates only the present
 * fields never nulls what the full form gave.
 */
export interface PaymentIntent {
  form: 'full' | 'list' | 'confirm' | 'cancel' | 'salvaged';
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
  /** Its top-level fields the parser does not know (docs/schema-drift.md); null or absent when none. */
  extra?: Record<string, unknown> | null;
}

/** A payment intent from `GET /payment_intents/{id}`: every field present. */
export type FullPaymentIntent = PaymentIntent &
  Required<Omit<PaymentIntent, 'raw' | 'extra'>> & { form: 'full' };

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

function toPaymentIntent(
  form: PaymentIntent['form'],
  w: PaymentIntentWire,
  raw: unknown,
  extra: Record<string, unknown> | null = null,
): PaymentIntent {
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
    ...(extra === null ? {} : { extra }),
  };
}

/** `GET /payment_intents/{id}`. */
export const parsePaymentIntent: RecordParser<FullPaymentIntent> = recordParser(
  fullSchema,
  (w, raw, extra) => toPaymentIntent('full', w, raw, extra) as FullPaymentIntent,
);

/** Items of `GET /payment_intents` (the list subset). */
export const parsePaymentIntentListItem: RecordParser<PaymentIntent> = recordParser(
  listSchema,
  (w, raw, extra) => toPaymentIntent('list', w, raw, extra),
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

/**
 * What can still be trusted of a full form that failed validation (a number in `metadata`, a bad
 * `expires_at`): every field that validates and stores on its own. `id` is the one asked for;
 * `status` and `amount`, when the full form's are unusable, come from the list form seen in the same
 * pass. null when status or amount is known from neither. This is what lets a payment seen `paid`
 * still raise its alert while the bad record goes to `rejected_records`.
 */
export function salvagePaymentIntent(
  id: string,
  raw: unknown,
  listed: PaymentIntent | undefined,
): PaymentIntent | null {
  const source = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? raw : {};
  const valid: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(fullSchema.shape)) {
    if (key === 'id' || !Object.hasOwn(source, key)) continue;
    const value: unknown = (source as Record<string, unknown>)[key];
    if (unstorableReason(value) !== null) continue;
    const parsed = schema.safeParse(value);
    if (parsed.success) valid[key] = parsed.data;
  }
  const status = (valid['status'] as PaymentIntentStatus | undefined) ?? listed?.status;
  const amount = (valid['amount'] as DecimalMoney | undefined) ?? listed?.amount;
  if (status === undefined || amount === undefined) return null;
  const wire = { ...valid, id, object: 'payment_intent' as const, status, amount } as PaymentIntentWire;
  const salvaged = toPaymentIntent('salvaged', wire, raw);
  // The list form's fields fill what the full form lost (description, created_at, updated_at).
  return listed === undefined ? salvaged : { ...listedFields(listed), ...salvaged };
}

function listedFields(listed: PaymentIntent): Partial<PaymentIntent> {
  return compact({
    description: listed.description,
    createdAt: listed.createdAt,
    updatedAt: listed.updatedAt,
  });
}
