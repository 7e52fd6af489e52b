import type { PaymentIntent } from '../records/payment-intent.js';
import type { AlertEventType } from '../sync/alert-events.js';

export const PAYMENT_INTENT_PAID = 'payment_intent.paid';

/** `data.payment_intent` of the alert body (docs/payment-intents.md, "Delivery"): exactly these fields, in this order. */
export interface AlertPaymentIntent {
  id: string;
  amount: { value: string; currency: string };
  status: string;
  paid_at: string | null;
  description: string | null;
  metadata: Record<string, string>;
  payer_account_balance_id: string | null;
  payee_account_balance_id: string | null;
}

/** The body POSTed to ALERT_WEBHOOK_URL. */
export interface AlertBody {
  id: string;
  type: typeof PAYMENT_INTENT_PAID;
  created_at: string;
  data: { payment_intent: AlertPaymentIntent };
}

/** What `alerts.payload` stores: the contract's `data.payment_intent`, from the full form of the intent. */
export function alertPayloadFromIntent(intent: PaymentIntent): AlertPaymentIntent {
  return {
    id: intent.id,
    amount: { value: intent.amount.value, currency: intent.amount.currency },
    status: intent.status,
    paid_at: intent.paidAt?.toISOString() ?? null,
    description: intent.description ?? null,
    metadata: intent.metadata ?? {},
    payer_account_balance_id: intent.payerAccountBalanceId ?? null,
    payee_account_balance_id: intent.payeeAccountBalanceId ?? null,
  };
}

/**
 * `data.payment_intent` of `payment_intent.canceled` and `payment_intent.refunded` (docs/payment-intents.md,
 * "Events"): the paid body's fields plus the two other state timestamps, in this order.
 */
export function intentEventPayloadFromIntent(intent: PaymentIntent): AlertPaymentIntent & {
  canceled_at: string | null;
  refunded_at: string | null;
} {
  return {
    ...alertPayloadFromIntent(intent),
    canceled_at: intent.canceledAt?.toISOString() ?? null,
    refunded_at: intent.refundedAt?.toISOString() ?? null,
  };
}

/** The key under `data` that holds each event type's payload. */
const DATA_KEY: Record<AlertEventType, string> = {
  'payment_intent.paid': 'payment_intent',
  'payment_intent.canceled': 'payment_intent',
  'payment_intent.refunded': 'payment_intent',
  'schema.drift': 'schema_drift',
  'member.needs_reauth': 'member',
};

/**
 * The exact bytes we sign and send. Built once per attempt from the stored row; key order is fixed
 * here, and receivers must verify the raw bytes, never a re-serialization. A `payment_intent.paid`
 * body is byte for byte what it was before other event types existed.
 */
export function serializeAlertBody(alert: {
  id: string;
  /** The stored type; `payment_intent.paid` when not given. */
  type?: string;
  createdAt: Date;
  payload: unknown;
}): string {
  const type = alert.type ?? PAYMENT_INTENT_PAID;
  const body = {
    id: alert.id,
    type,
    created_at: alert.createdAt.toISOString(),
    data: { [DATA_KEY[type as AlertEventType] ?? 'payment_intent']: alert.payload },
  };
  return JSON.stringify(body);
}
