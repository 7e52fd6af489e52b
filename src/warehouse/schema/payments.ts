import type { ColumnType, Generated } from 'kysely';
import type { Timestamp, DefaultedTimestamp, Numeric, Int8, Json, ExtraJson } from './columns.js';

// Balances, payment intents with their transitions, and the alerts raised from them. Assembled
// into `DB` by ../schema.ts.

export interface BalanceSnapshotsTable {
  account_balance_id: string;
  observed_at: Timestamp;
  owner_id: string;
  owner_type: string | null;
  balance_value: Numeric;
  balance_currency: string;
  balance_usd_cents: Int8 | null;
  /** The record's fields its parser does not know (docs/schema-drift.md); null when none. */
  extra: ExtraJson;
}

export interface PaymentIntentsTable {
  id: string;
  payer_account_balance_id: string | null;
  payee_account_balance_id: string | null;
  amount_value: Numeric | null;
  amount_currency: string | null;
  description: string | null;
  status: string;
  expires_at: Timestamp | null;
  canceled_at: Timestamp | null;
  paid_at: Timestamp | null;
  refunded_at: Timestamp | null;
  metadata: Json | null;
  created_at: Timestamp | null;
  updated_at: Timestamp | null;
  first_seen_at: DefaultedTimestamp;
  last_polled_at: Timestamp | null;
  next_poll_at: Timestamp | null;
  poll_count: Generated<number>;
  /** The record's fields its parser does not know (docs/schema-drift.md); null when none. */
  extra: ExtraJson;
}

export interface PaymentIntentTransitionsTable {
  id: Generated<string>;
  payment_intent_id: string;
  from_status: string | null;
  to_status: string;
  observed_at: Timestamp;
}

export interface AlertsTable {
  id: string;
  type: string;
  /** What the event is about; unique with `type` (docs/payment-intents.md, "Events"). */
  subject: ColumnType<string, string | undefined, string>;
  /** Set for payment_intent.* events only. */
  payment_intent_id: string | null;
  payload: Json;
  created_at: DefaultedTimestamp;
  delivered_at: Timestamp | null;
  attempts: Generated<number>;
  last_error: string | null;
  next_attempt_at: DefaultedTimestamp;
  failed_at: Timestamp | null;
}
