import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { PaymentIntent, PaymentIntentStatus } from '../records/payment-intent.js';
import { PAYMENT_INTENT_STATUSES } from '../records/payment-intent.js';
import {
  alertPayloadFromIntent,
  intentEventPayloadFromIntent,
  PAYMENT_INTENT_PAID,
} from '../alerts/alert-body.js';
import { DEFAULT_ALERT_EVENTS, type AlertEventType } from '../sync/alert-events.js';
import { intentEventFor } from '../sync/intent-events.js';
import { recordAlertEvent } from './alerts.js';
import { classifyTransition, type TransitionDecision } from '../sync/intent-transitions.js';
import type { DueIntent } from '../sync/intent-poll-schedule.js';
import type { DB } from './schema.js';
import type { Executor } from './database.js';

/** What the warehouse holds about an intent, as far as polling needs it. */
export interface StoredIntent {
  id: string;
  status: PaymentIntentStatus;
  pollCount: number;
  createdAt: Date | null;
  expiresAt: Date | null;
  updatedAt: Date | null;
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
        hasFullForm: row.payer_account_balance_id !== null,
        payerAccountBalanceId: row.payer_account_balance_id,
        payeeAccountBalanceId: row.payee_account_balance_id,
        metadata: row.metadata as Record<string, string> | null,
      },
    ]),
  );
}

const PAID_ONLY: ReadonlySet<AlertEventType> = new Set(DEFAULT_ALERT_EVENTS);

export type FullObservationOutcome =
  | {
      written: true;
      decision: TransitionDecision;
      /** The event recorded with this observation (paid, canceled or refunded), if any. */
      alertId: string | null;
      eventType?: AlertEventType;
    }
  /** Another poller changed (or inserted) the row since `previous` was read: it records the change. */
  | { written: false; reason: 'lost-race' | 'stale'; decision: TransitionDecision };

export interface FullObservation {
  /** The full form (`GET /payment_intents/{id}`), or what validated of it (form `salvaged`). */
  intent: PaymentIntent;
  /** The status this poller read before fetching; null when the intent was not in the warehouse. */
  previous: PaymentIntentStatus | null;
  observedAt: Date;
  watchingSince: Date;
  nextPollAt: Date | null;
  /** ALERT_EVENTS; `payment_intent.paid` alone when not given. */
  events?: ReadonlySet<AlertEventType>;
}

/**
 * One observation of the full form, in one transaction: the intent row (conditional on the status
 * this poller read, so a poller that lost a race records nothing), the transition (from_status null at
 * first sight), and the paid alert when classifyTransition says so. The unique indexes on
 * (payment_intent_id, to_status) and (type, payment_intent_id) make duplicates impossible even if the
 * status condition were bypassed.
 */
export async function recordFullObservation(
  db: Kysely<DB>,
  observation: FullObservation,
): Promise<FullObservationOutcome> {
  const { intent, previous, observedAt } = observation;
  const decision = classifyTransition(
    previous,
    { status: intent.status, paidAt: paidAtForDecision(intent) },
    observation.watchingSince,
  );
  if (decision.stale) return { written: false, reason: 'stale', decision };
  return db.transaction().execute(async (tx) => {
    const fields = fullFormColumns(intent, observedAt, observation.nextPollAt);
    let wrote: boolean;
    if (previous === null) {
      const inserted = await tx
        .insertInto('rewards.payment_intents')
        .values({ id: intent.id, ...fields, poll_count: 1, first_seen_at: observedAt })
        .onConflict((conflict) => conflict.column('id').doNothing())
        .returning('id')
        .executeTakeFirst();
      wrote = inserted !== undefined;
    } else {
      const updated = await tx
        .updateTable('rewards.payment_intents')
        .set({ ...fields, poll_count: sql`poll_count + 1` })
        .where('id', '=', intent.id)
        .where('status', '=', previous)
        .returning('id')
        .executeTakeFirst();
      wrote = updated !== undefined;
    }
    if (!wrote) return { written: false, reason: 'lost-race', decision } as const;
    if (decision.transition) {
      await tx
        .insertInto('rewards.payment_intent_transitions')
        .values({
          payment_intent_id: intent.id,
          from_status: decision.transition.from,
          to_status: decision.transition.to,
          observed_at: observedAt,
        })
        .onConflict((conflict) => conflict.columns(['payment_intent_id', 'to_status']).doNothing())
        .execute();
    }
    let alertId: string | null = null;
    const event = intentEventFor(
      decision,
      intent,
      observation.watchingSince,
      observation.events ?? PAID_ONLY,
    );
    if (event === PAYMENT_INTENT_PAID) {
      // Unchanged since before ALERT_EVENTS: the body and the (type, payment_intent_id) guarantee.
      const alert = await tx
        .insertInto('rewards.alerts')
        .values({
          id: randomUUID(),
          type: PAYMENT_INTENT_PAID,
          subject: intent.id,
          payment_intent_id: intent.id,
          payload: JSON.stringify(alertPayloadFromIntent(intent)),
          created_at: observedAt,
          next_attempt_at: observedAt,
        })
        .onConflict((conflict) => conflict.columns(['type', 'payment_intent_id']).doNothing())
        .returning('id')
        .executeTakeFirst();
      alertId = alert?.id ?? null;
    } else if (event !== null) {
      alertId = await recordAlertEvent(tx, {
        type: event,
        subject: intent.id,
        paymentIntentId: intent.id,
        payload: intentEventPayloadFromIntent(intent),
        at: observedAt,
      });
    }
    if (alertId !== null && event !== null)
      return { written: true, decision, alertId, eventType: event } as const;
    return { written: true, decision, alertId } as const;
  });
}

/**
 * A salvaged form may have lost `paid_at`; its `updated_at` (set with every state timestamp, so at or
 * after paid_at) stands in when deciding a first-sight alert: a payment seen paid is not left silent.
 */
function paidAtForDecision(intent: PaymentIntent): Date | null | undefined {
  if (intent.form === 'salvaged' && intent.paidAt === undefined) return intent.updatedAt;
  return intent.paidAt;
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
 * First sight of intents in the list form: the row (list fields only; the payee is known when the
 * list was filtered by it) and the transition from null, in one transaction. Only for observations
 * that cannot raise an alert (pending, or last updated before watching began); the caller checks that
 * with `cannotAlertAtFirstSight`. The full form comes later. Returns the ids this call inserted.
 */
export async function insertFirstSightsFromList(
  db: Kysely<DB>,
  input: {
    intents: readonly PaymentIntent[];
    payee: string | undefined;
    observedAt: Date;
    nextPollAt: (intent: PaymentIntent) => Date | null;
  },
): Promise<string[]> {
  const pending = input.intents;
  if (pending.length === 0) return [];
  return db.transaction().execute(async (tx) => {
    const inserted = await tx
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
    if (ids.length > 0) {
      await tx
        .insertInto('rewards.payment_intent_transitions')
        .values(
          ids.map((id) => ({
            payment_intent_id: id,
            from_status: null,
            to_status: statusById.get(id) ?? 'pending',
            observed_at: input.observedAt,
          })),
        )
        .onConflict((conflict) => conflict.columns(['payment_intent_id', 'to_status']).doNothing())
        .execute();
    }
    return ids;
  });
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

/**
 * Open intents whose poll is due, most overdue first, each with its estimated position in the
 * newest-first list (what a sweep must read past to see it). Ranks count the warehouse rows of the
 * same payee created at or after the oldest open intent; intents the warehouse has not seen yet sit
 * above them, so a rank is a lower bound and the sweep stops on created_at, not on the rank.
 */
export async function findDueOpenIntents(
  db: Executor,
  input: { payee: string | undefined; limit: number },
): Promise<DueIntent[]> {
  // Due by Postgres's clock: next_poll_at was computed from it too (the pipeline's clock).
  // Rows first written from an unfiltered list have no payee until their full form arrives.
  const payeeFilter =
    input.payee === undefined
      ? sql`true`
      : sql`(payee_account_balance_id = ${input.payee}::uuid or payee_account_balance_id is null)`;
  const { rows } = await sql<{ id: string; rank: string; created_at: Date | null }>`
    with oldest_open as (
      select min(created_at) as created_at from rewards.payment_intents
      where status = 'pending' and next_poll_at is not null and ${payeeFilter}
    ),
    ranked as (
      select id, status, next_poll_at, created_at,
             row_number() over (order by created_at desc nulls last, id) - 1 as rank
      from rewards.payment_intents
      where ${payeeFilter} and created_at >= (select created_at from oldest_open)
    )
    select id, rank, created_at from ranked
    where status = 'pending' and next_poll_at <= now()
    order by next_poll_at, id
    limit ${input.limit}`.execute(db);
  const ranked = rows.map((row) => ({ id: row.id, rank: Number(row.rank), createdAt: row.created_at }));
  // Open intents a payee-filtered sweep never passes (another payee, seen while the list was
  // unfiltered) or cannot locate (no created_at): polled by id.
  const payee = input.payee;
  const unranked = await db
    .selectFrom('rewards.payment_intents')
    .select(['id'])
    .where('status', '=', 'pending')
    .where('next_poll_at', '<=', sql<Date>`now()`)
    .where((eb) =>
      payee === undefined
        ? eb('created_at', 'is', null)
        : eb.or([
            eb('created_at', 'is', null),
            eb.and([
              eb('payee_account_balance_id', 'is not', null),
              eb('payee_account_balance_id', '<>', payee),
            ]),
          ]),
    )
    .orderBy('next_poll_at')
    .limit(input.limit)
    .execute();
  return [
    ...ranked,
    ...unranked.map((row) => ({ id: row.id, rank: Number.MAX_SAFE_INTEGER, createdAt: null })),
  ];
}

/**
 * Rows that only the list form has written (no payer, expires_at or metadata yet), for a by-id fetch
 * when a pass has budget left: open ones first, then the least recently looked at.
 */
export async function findRowsWithoutFullForm(
  db: Executor,
  input: { limit: number; exclude: readonly string[] },
): Promise<string[]> {
  if (input.limit <= 0) return [];
  let query = db
    .selectFrom('rewards.payment_intents')
    .select('id')
    .where('payer_account_balance_id', 'is', null)
    .where((eb) => eb.or([eb('status', '<>', 'pending'), eb('next_poll_at', 'is not', null)]))
    .orderBy(sql`status = 'pending'`, 'desc')
    .orderBy(sql`last_polled_at nulls first`)
    .orderBy('first_seen_at')
    .limit(input.limit);
  if (input.exclude.length > 0) query = query.where('id', 'not in', [...input.exclude]);
  const rows = await query.execute();
  return rows.map((row) => row.id);
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

/** Pending intents still on a poll schedule (the `openIntents` gauge). */
/**
 * How deep a newest-first sweep must read to pass every open intent: the oldest open intent's
 * created_at and the rows (of the payee) created at or after it. Null when nothing is open.
 */
export async function openIntentsReach(
  db: Executor,
  payee: string | undefined,
): Promise<{ oldestCreatedAt: Date; depth: number } | null> {
  const payeeFilter =
    payee === undefined
      ? sql`true`
      : sql`(payee_account_balance_id = ${payee}::uuid or payee_account_balance_id is null)`;
  const { rows } = await sql<{ oldest: Date | null; depth: string }>`
    with oldest_open as (
      select min(created_at) as created_at from rewards.payment_intents
      where status = 'pending' and next_poll_at is not null and ${payeeFilter}
    )
    select (select created_at from oldest_open) as oldest,
           (select count(*) from rewards.payment_intents
            where ${payeeFilter} and created_at >= (select created_at from oldest_open)) as depth`.execute(
    db,
  );
  const row = rows[0];
  if (row?.oldest === null || row === undefined) return null;
  return { oldestCreatedAt: row.oldest, depth: Number(row.depth) };
}

export async function countOpenIntents(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('rewards.payment_intents')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('status', '=', 'pending')
    .where('next_poll_at', 'is not', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

// ---- stream state (rewards.sync_state, stream 'payment_intents') ----

const STREAM = 'payment_intents';

export interface IntentStreamState {
  /** When the pipeline began watching intents: paid before this raises no alert at first sight. */
  watchingSince: Date;
  lastFullSweepAt: Date | null;
  /** Newest created_at of an intent fully processed by a sweep (the discovery horizon). */
  newestCreatedAt: Date | null;
  /** The page size the server applied on the last sweep. */
  pageSize: number | null;
}

/**
 * Reads the stream state, storing `watchingSince = now` the first time. Insert-or-keep in one
 * statement, so two first passes racing agree on one moment.
 */
export async function loadIntentStreamState(db: Executor, now: Date): Promise<IntentStreamState> {
  const initial = JSON.stringify({ watchingSince: now.toISOString() });
  await sql`
    insert into rewards.sync_state (stream, state, updated_at)
    values (${STREAM}, ${initial}::jsonb, ${now}::timestamptz)
    on conflict (stream) do update
      set state = jsonb_build_object('watchingSince', ${now.toISOString()}::text) || rewards.sync_state.state
      where not (rewards.sync_state.state ? 'watchingSince')`.execute(db);
  const row = await db
    .selectFrom('rewards.sync_state')
    .select('state')
    .where('stream', '=', STREAM)
    .executeTakeFirstOrThrow();
  const state = (row.state ?? {}) as Record<string, unknown>;
  return {
    watchingSince: readDate(state['watchingSince']) ?? now,
    lastFullSweepAt: readDate(state['lastFullSweepAt']),
    newestCreatedAt: readDate(state['newestCreatedAt']),
    pageSize: typeof state['pageSize'] === 'number' ? state['pageSize'] : null,
  };
}

/** Merges fields into the stream state; `watchingSince` is never overwritten. */
export async function saveIntentStreamState(
  db: Executor,
  patch: Partial<Omit<IntentStreamState, 'watchingSince'>>,
  now: Date,
): Promise<void> {
  const json: Record<string, unknown> = {};
  if (patch.lastFullSweepAt !== undefined)
    json['lastFullSweepAt'] = patch.lastFullSweepAt?.toISOString() ?? null;
  if (patch.newestCreatedAt !== undefined)
    json['newestCreatedAt'] = patch.newestCreatedAt?.toISOString() ?? null;
  if (patch.pageSize !== undefined) json['pageSize'] = patch.pageSize;
  await sql`
    update rewards.sync_state
    set state = state || ${JSON.stringify(json)}::jsonb, updated_at = ${now}::timestamptz
    where stream = ${STREAM}`.execute(db);
}

function readDate(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}
