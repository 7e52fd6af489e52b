import type { PaymentIntent } from '../records/payment-intent.js';

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
 * The exact bytes we sign and send. Built once per attempt from the stored row; key order is fixed
 * here, and receivers must verify the raw bytes, never a re-serialization.
 */
export function serializeAlertBody(alert: { id: string; createdAt: Date; payload: unknown }): string {
  const body = {
    id: alert.id,
    type: PAYMENT_INTENT_PAID,
    created_at: alert.createdAt.toISOString(),
    data: { payment_intent: alert.payload },
  };
  return JSON.stringify(body);
}
