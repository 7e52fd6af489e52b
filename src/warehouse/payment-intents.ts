import { sql } from 'kysely';
import type { PaymentIntent, PaymentIntentStatus } from '../records/payment-intent.js';
import { PAYMENT_INTENT_STATUSES } from '../records/payment-intent.js';
import type { Executor } from './database.js';

// The payment intent rows and their transition ledger. Every function writes through the executor
// it is given: the caller owns the transaction (docs/payment-intents.md, "One pass").

/** What the warehouse holds about an intent, as far as polling needs it. */
export interface StoredIntent {
  id: string;
  status: PaymentIntentStatus;
  pollCount: number;
  createdAt: Date | null;
  expiresAt: Date | null;
  updatedAt: Date | null;
  amountValue: string | null;
  amountCurrency: string | null;
  description: string | null;
  nextPollAt: Date | null;
  lastPolledAt: Date | null;
  /** Whether the full form was ever written (the list form carries no payer). */
  hasFullForm: boolean;
  /** Fields only the full form carries and that never change after creation. */
  payerAccountBalanceId: string | null;
  payeeAccountBalanceId: string | null;
  metadata: Record<string, string> | null;
}

function asStatus(value: string): PaymentIntentStatus {
  return (PAYMENT_INTENT_STATUSES as readonly string[]).includes(value)
    ? (value as PaymentIntentStatus)
    : 'pending';
}

export async function loadStoredIntents(
  db: Executor,
  ids: readonly string[],
): Promise<Map<string, StoredIntent>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('rewards.payment_intents')
    .select([
      'id',
      'status',
      'poll_count',
      'created_at',
      'expires_at',
      'updated_at',
      'amount_value',
      'amount_currency',
      'description',
      'next_poll_at',
      'last_polled_at',
      'payer_account_balance_id',
      'payee_account_balance_id',
      'metadata',
    ])
    .where('id', 'in', [...new Set(ids)])
    .execute();
  return new Map(
    rows.map((row) => [
      row.id,
      {
        id: row.id,
        status: asStatus(row.status),
        pollCount: row.poll_count,
        createdAt: row.created_at,
        expiresAt: row.expires_at,
        updatedAt: row.updated_at,
        amountValue: row.amount_value,
        amountCurrency: row.amount_currency,
        description: row.description,
        nextPollAt: row.next_poll_at,
        lastPolledAt: row.last_polled_at,
        hasFullForm: row.payer_account_balance_id !== null,
        payerAccountBalanceId: row.payer_account_balance_id,
        payeeAccountBalanceId: row.payee_account_balance_id,
        metadata: row.metadata as Record<string, string> | null,
      },
    ]),
  );
}

/**
 * Writes one observation of the full form (or what validated of it) to the intent row: inserted at
 * first sight (`previous` null), else updated only while the row still holds `previous`, so a poller
 * that lost a race writes nothing. Returns whether the row was written.
 */
export async function writeFullFormObservation(
  db: Executor,
  input: {
    intent: PaymentIntent;
    previous: PaymentIntentStatus | null;
    observedAt: Date;
    nextPollAt: Date | null;
  },
): Promise<boolean> {
  const { intent, previous, observedAt } = input;
  const fields = fullFormColumns(intent, observedAt, input.nextPollAt);
  if (previous === null) {
    const inserted = await db
      .insertInto('rewards.payment_intents')
      .values({ id: intent.id, ...fields, poll_count: 1, first_seen_at: observedAt })
      .onConflict((conflict) => conflict.column('id').doNothing())
      .returning('id')
      .executeTakeFirst();
    return inserted !== undefined;
  }
  const updated = await db
    .updateTable('rewards.payment_intents')
    .set({ ...fields, poll_count: sql`poll_count + 1` })
    .where('id', '=', intent.id)
    .where('status', '=', previous)
    .returning('id')
    .executeTakeFirst();
  return updated !== undefined;
}

/**
 * Adds status changes to the ledger (from_status null at first sight). The unique index on
 * (payment_intent_id, to_status) keeps each status entered once, whatever the callers do.
 */
export async function recordIntentTransitions(
  db: Executor,
  transitions: readonly {
    paymentIntentId: string;
    from: PaymentIntentStatus | null;
    to: PaymentIntentStatus;
    observedAt: Date;
  }[],
): Promise<void> {
  if (transitions.length === 0) return;
  await db
    .insertInto('rewards.payment_intent_transitions')
    .values(
      transitions.map((transition) => ({
        payment_intent_id: transition.paymentIntentId,
        from_status: transition.from,
        to_status: transition.to,
        observed_at: transition.observedAt,
      })),
    )
    .onConflict((conflict) => conflict.columns(['payment_intent_id', 'to_status']).doNothing())
    .execute();
}

function fullFormColumns(intent: PaymentIntent, observedAt: Date, nextPollAt: Date | null) {
  return {
    status: intent.status,
    amount_value: intent.amount.value,
    amount_currency: intent.amount.currency.toLowerCase(),
    ...(intent.description !== undefined ? { description: intent.description } : {}),
    ...(intent.payerAccountBalanceId !== undefined
      ? { payer_account_balance_id: intent.payerAccountBalanceId }
      : {}),
    ...(intent.payeeAccountBalanceId !== undefined
      ? { payee_account_balance_id: intent.payeeAccountBalanceId }
      : {}),
    ...(intent.expiresAt !== undefined ? { expires_at: intent.expiresAt } : {}),
    ...(intent.canceledAt !== undefined ? { canceled_at: intent.canceledAt } : {}),
    ...(intent.paidAt !== undefined ? { paid_at: intent.paidAt } : {}),
    ...(intent.refundedAt !== undefined ? { refunded_at: intent.refundedAt } : {}),
    ...(intent.metadata !== undefined ? { metadata: JSON.stringify(intent.metadata) } : {}),
    ...(intent.createdAt !== undefined ? { created_at: intent.createdAt } : {}),
    ...(intent.updatedAt !== undefined ? { updated_at: intent.updatedAt } : {}),
    // The full form's unknown fields (docs/schema-drift.md); other forms leave what it gave.
    ...(intent.form === 'full' ? { extra: intent.extra == null ? null : JSON.stringify(intent.extra) } : {}),
    last_polled_at: observedAt,
    next_poll_at: nextPollAt,
  };
}

/**
 * First sight of intents in the list form: the rows (list fields only; the payee is known when the
 * list was filtered by it) and their transitions from null; the caller's transaction holds both. Only
 * for observations that cannot raise an alert (routeListedIntent decides that). The full form comes
 * later. Returns the ids this call inserted.
 */
export async function insertFirstSightsFromList(
  db: Executor,
  input: {
    intents: readonly PaymentIntent[];
    payee: string | undefined;
    observedAt: Date;
    nextPollAt: (intent: PaymentIntent) => Date | null;
  },
): Promise<string[]> {
  const pending = input.intents;
  if (pending.length === 0) return [];
  const inserted = await db
    .insertInto('rewards.payment_intents')
    .values(
      pending.map((intent) => ({
        id: intent.id,
        status: intent.status,
        amount_value: intent.amount.value,
        amount_currency: intent.amount.currency.toLowerCase(),
        description: intent.description ?? null,
        payee_account_balance_id: input.payee ?? null,
        created_at: intent.createdAt ?? null,
        updated_at: intent.updatedAt ?? null,
        extra: intent.extra == null ? null : JSON.stringify(intent.extra),
        first_seen_at: input.observedAt,
        last_polled_at: input.observedAt,
        next_poll_at: input.nextPollAt(intent),
        poll_count: 1,
      })),
    )
    .onConflict((conflict) => conflict.column('id').doNothing())
    .returning('id')
    .execute();
  const ids = inserted.map((row) => row.id);
  const statusById = new Map(pending.map((intent) => [intent.id, intent.status]));
  await recordIntentTransitions(
    db,
    ids.map((id) => ({
      paymentIntentId: id,
      from: null,
      to: statusById.get(id) ?? 'pending',
      observedAt: input.observedAt,
    })),
  );
  return ids;
}

/**
 * A list observation that shows the stored status: refresh the fields the list form carries (and only
 * those) and count it as a poll. One statement per page. Rows whose status moved meanwhile are left
 * alone (`p.status = v.status`); terminal rows are only written when the list shows a newer version.
 */
export async function applyUnchangedListObservations(
  db: Executor,
  rows: readonly { intent: PaymentIntent; nextPollAt: Date | null }[],
  observedAt: Date,
): Promise<number> {
  if (rows.length === 0) return 0;
  const values = sql.join(
    rows.map(
      ({ intent, nextPollAt }) =>
        sql`(${intent.id}::uuid, ${intent.status}, ${intent.amount.value}::numeric, ${intent.amount.currency.toLowerCase()},
             ${intent.description ?? null}::text, ${intent.createdAt ?? null}::timestamptz,
             ${intent.updatedAt ?? null}::timestamptz, ${nextPollAt}::timestamptz)`,
    ),
  );
  const result = await sql`
    update rewards.payment_intents as p
    set amount_value = v.amount_value,
        amount_currency = v.amount_currency,
        description = coalesce(v.description, p.description),
        created_at = coalesce(v.created_at, p.created_at),
        updated_at = coalesce(v.updated_at, p.updated_at),
        last_polled_at = ${observedAt}::timestamptz,
        poll_count = p.poll_count + case when p.status = 'pending' then 1 else 0 end,
        next_poll_at = case when p.status = 'pending' then v.next_poll_at else p.next_poll_at end
    from (values ${values}) as v(id, status, amount_value, amount_currency, description, created_at, updated_at, next_poll_at)
    where p.id = v.id
      and p.status = v.status
      and (p.status = 'pending' or p.updated_at is distinct from v.updated_at
           or p.amount_value is distinct from v.amount_value or p.description is distinct from v.description)`.execute(
    db,
  );
  return Number(result.numAffectedRows ?? 0n);
}

/** A by-id fetch gave nothing usable (404, rejected record): note the look so the row goes to the back. */
export async function markLookedAt(
  db: Executor,
  id: string,
  at: Date,
  input: { stopPolling: boolean },
): Promise<void> {
  await db
    .updateTable('rewards.payment_intents')
    .set({ last_polled_at: at, ...(input.stopPolling ? { next_poll_at: null } : {}) })
    .where('id', '=', id)
    .execute();
}

/** Looks at these pending intents again at once (work a pass had to leave for the next one). */
export async function pollAgainNow(db: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('rewards.payment_intents')
    .set({ next_poll_at: sql<Date>`now()` })
    .where('id', 'in', [...ids])
    .where('status', '=', 'pending')
    .execute();
}
