import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { AlertEventType } from '../sync/alert-events.js';
import type { Executor } from '../warehouse/database.js';

/** An alert claimed for one delivery attempt. `attempts` already counts this attempt. */
export interface ClaimedAlert {
  id: string;
  /** `payment_intent.paid`, `schema.drift`, … (ALERT_EVENTS). */
  type: string;
  /** What the event is about (unique with `type`). */
  subject: string;
  /** Set for payment_intent.* events only. */
  paymentIntentId: string | null;
  payload: unknown;
  createdAt: Date;
  attempts: number;
}

/**
 * Claims up to `limit` due, undelivered alerts for one attempt each: `for update skip locked` so two
 * workers never take the same row, and the claim pushes `next_attempt_at` out by a lease and counts
 * the attempt, in the same statement. The row lock is released at once (no transaction held open
 * across an HTTP request); the lease keeps other workers away meanwhile, and if this worker dies
 * mid-send the alert becomes due again when the lease runs out (at-least-once).
 *
 * The claim is a lease on the row: due-ness and the lease's end are Postgres's now() (a worker
 * whose clock is off claims exactly when any other would), and `attempts` after the claim is its
 * fencing token: the delivery record of an attempt only lands while no later claim was made.
 */
export async function claimDueAlerts(
  db: Executor,
  input: {
    limit: number;
    leaseMs: number;
    /** Only these alerts (delivery right after their transition commits); all due ones otherwise. */
    ids?: readonly string[];
  },
): Promise<ClaimedAlert[]> {
  if (input.ids?.length === 0) return [];
  const onlyIds = input.ids === undefined ? sql`true` : sql`id = any(${[...input.ids]}::uuid[])`;
  const { rows } = await sql<{
    id: string;
    type: string;
    subject: string;
    payment_intent_id: string | null;
    payload: unknown;
    created_at: Date;
    attempts: number;
  }>`
    update rewards.alerts as a
    set attempts = a.attempts + 1,
        next_attempt_at = now() + ${Math.max(1, Math.round(input.leaseMs))} * interval '1 millisecond'
    where a.id in (
      select id from rewards.alerts
      where delivered_at is null and failed_at is null and next_attempt_at <= now()
        and ${onlyIds}
      order by next_attempt_at, created_at
      limit ${input.limit}
      for update skip locked
    )
    returning a.id, a.type, a.subject, a.payment_intent_id, a.payload, a.created_at, a.attempts`.execute(db);
  return rows
    .map((row) => ({
      id: row.id,
      type: row.type,
      subject: row.subject,
      paymentIntentId: row.payment_intent_id,
      payload: row.payload,
      createdAt: row.created_at,
      attempts: row.attempts,
    }))
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
}

/**
 * The receiver accepted `alert`. Recorded even when a later claim exists (it was delivered; the
 * later attempt, if it runs, is a redelivery receivers dedupe), never twice.
 */
export async function markAlertDelivered(db: Executor, alert: Pick<ClaimedAlert, 'id'>): Promise<void> {
  await db
    .updateTable('rewards.alerts')
    .set({ delivered_at: sql<Date>`now()`, last_error: null })
    .where('id', '=', alert.id)
    .where('delivered_at', 'is', null)
    .execute();
}

/**
 * A failed attempt: retry `retryInMs` from now (Postgres's), or give up. Fenced by the claim's
 * token: a worker whose claim was taken over (its lease ran out mid-send) records nothing, so it
 * can neither push out nor end the newer attempt.
 */
export async function markAlertAttemptFailed(
  db: Executor,
  alert: Pick<ClaimedAlert, 'id' | 'attempts'>,
  outcome: { error: string; retryInMs: number } | { error: string; giveUp: true },
): Promise<void> {
  await db
    .updateTable('rewards.alerts')
    .set({
      last_error: outcome.error.slice(0, 500),
      ...('giveUp' in outcome
        ? { failed_at: sql<Date>`now()` }
        : {
            next_attempt_at: sql<Date>`now() + ${Math.max(0, Math.round(outcome.retryInMs))} * interval '1 millisecond'`,
          }),
    })
    .where('id', '=', alert.id)
    .where('attempts', '=', alert.attempts)
    .where('delivered_at', 'is', null)
    .execute();
}

/**
 * Without a webhook, alerts stay undelivered (delivery starts once one is configured). Marks the due
 * ones that have not been reported yet and returns them, so each is logged once, not on every pass.
 */
export async function noteUndeliverableAlerts(
  db: Executor,
  reason: string,
  limit: number,
): Promise<{ id: string; type: string; subject: string }[]> {
  const { rows } = await sql<{ id: string; type: string; subject: string }>`
    update rewards.alerts set last_error = ${reason}
    where id in (
      select id from rewards.alerts
      where delivered_at is null and failed_at is null and attempts = 0
        and last_error is distinct from ${reason}
      order by created_at
      limit ${limit}
      for update skip locked
    )
    returning id, type, subject`.execute(db);
  return rows.map((row) => ({ id: row.id, type: row.type, subject: row.subject }));
}

/** For the gauges: alerts still to deliver, and alerts given up on. */
export async function countAlertBacklog(db: Executor): Promise<{ undelivered: number; failed: number }> {
  const row = await db
    .selectFrom('rewards.alerts')
    .select((eb) => [
      eb.fn
        .count<string>('id')
        .filterWhere('delivered_at', 'is', null)
        .filterWhere('failed_at', 'is', null)
        .as('undelivered'),
      eb.fn.count<string>('id').filterWhere('failed_at', 'is not', null).as('failed'),
    ])
    .executeTakeFirstOrThrow();
  return { undelivered: Number(row.undelivered), failed: Number(row.failed) };
}

/**
 * Records one event, at most once per (type, subject) whatever the concurrency (the unique index
 * does it, not a read before the write). Returns the new alert's id, or null when that event was
 * already recorded. `executor` may be the caller's transaction, so the event commits with the
 * change it reports.
 */
export async function recordAlertEvent(
  db: Executor,
  event: {
    type: AlertEventType;
    subject: string;
    paymentIntentId?: string;
    payload: unknown;
    at?: Date;
  },
): Promise<string | null> {
  const at = event.at === undefined ? sql<Date>`now()` : sql<Date>`${event.at}::timestamptz`;
  const { rows } = await sql<{ id: string }>`
    insert into rewards.alerts (id, type, subject, payment_intent_id, payload, created_at, next_attempt_at)
    values (${randomUUID()}, ${event.type}, ${event.subject}, ${event.paymentIntentId ?? null},
            ${JSON.stringify(event.payload)}::jsonb, ${at}, ${at})
    on conflict (type, subject) do nothing
    returning id`.execute(db);
  return rows[0]?.id ?? null;
}
