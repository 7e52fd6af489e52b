import { sql, type ExpressionBuilder } from 'kysely';
import type { DueIntent } from '../sync/intent-poll-schedule.js';
import type { Executor } from './database.js';
import type { DB } from './schema.js';

// What the payment intents pass reads to plan its polling (docs/payment-intents.md, "One pass").

/**
 * Open intents whose poll is due and that no list round reaches, most overdue first: another
 * payee's (seen while the list was unfiltered), without created_at (a newest-first round cannot
 * place them), or below the newest `maxRoundRows` rows (too deep: a round would read the whole list
 * for them). These are polled by id on their schedule; every other open intent is seen by the rounds.
 */
export async function findUnreachableDueIntents(
  db: Executor,
  input: { payee: string | undefined; limit: number; maxRoundRows: number },
): Promise<DueIntent[]> {
  // Due by Postgres's clock: next_poll_at was computed from it too (the pipeline's clock).
  const payee = input.payee;
  const payeeFilter =
    payee === undefined
      ? sql`true`
      : sql`(payee_account_balance_id = ${payee}::uuid or payee_account_balance_id is null)`;
  const cutoff = await roundCutoff(db, payeeFilter, input.maxRoundRows);
  const rows = await db
    .selectFrom('rewards.payment_intents')
    .select(['id'])
    .where('status', '=', 'pending')
    .where('next_poll_at', '<=', sql<Date>`now()`)
    .where((eb) =>
      payee === undefined
        ? eb.or([eb('created_at', 'is', null), ...(cutoff === null ? [] : [eb('created_at', '<', cutoff)])])
        : eb.or([
            eb('created_at', 'is', null),
            ...(cutoff === null ? [] : [eb('created_at', '<', cutoff)]),
            eb.and([
              eb('payee_account_balance_id', 'is not', null),
              eb('payee_account_balance_id', '<>', payee),
            ]),
          ]),
    )
    .orderBy('next_poll_at')
    .limit(input.limit)
    .execute();
  return rows.map((row) => ({ id: row.id, rank: Number.MAX_SAFE_INTEGER, createdAt: null }));
}

/**
 * A row whose full form is still to be read: written from the list form only (no payer, expires_at
 * or metadata), or a cancellation or refund recorded from the list form (no canceled_at/refunded_at).
 */
function awaitsFullForm(eb: ExpressionBuilder<DB, 'rewards.payment_intents'>) {
  return eb.or([
    eb.and([
      eb('payer_account_balance_id', 'is', null),
      eb.or([eb('status', '<>', 'pending'), eb('next_poll_at', 'is not', null)]),
    ]),
    // An expired intent reads as canceled with canceled_at null: its expires_at explains it.
    eb.and([
      eb('status', '=', 'canceled'),
      eb('canceled_at', 'is', null),
      eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<Date>`now()`)]),
    ]),
    eb.and([eb('status', '=', 'refunded'), eb('refunded_at', 'is', null)]),
  ]);
}

/**
 * Rows whose full form is still to be read (awaitsFullForm), for a by-id fetch
 * when a tick has full-form budget left: newest first (the intents whose alerts are likeliest to
 * come, and payments alerted from the list form, completed soonest), then the least recently looked at.
 */
export async function findRowsWithoutFullForm(
  db: Executor,
  input: { limit: number; exclude: readonly string[] },
): Promise<string[]> {
  if (input.limit <= 0) return [];
  let query = db
    .selectFrom('rewards.payment_intents')
    .select('id')
    .where((eb) => awaitsFullForm(eb))
    .orderBy(sql`created_at desc nulls last`)
    .orderBy(sql`last_polled_at nulls first`)
    .orderBy('first_seen_at')
    .limit(input.limit);
  if (input.exclude.length > 0) query = query.where('id', 'not in', [...input.exclude]);
  const rows = await query.execute();
  return rows.map((row) => row.id);
}

/** Whether any row still waits for its full form (findRowsWithoutFullForm would find one). */
export async function hasRowsWithoutFullForm(db: Executor): Promise<boolean> {
  const row = await db
    .selectFrom('rewards.payment_intents')
    .select('id')
    .where((eb) => awaitsFullForm(eb))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * How deep a newest-first round must read to pass every open intent it covers: the oldest open
 * intent among the newest `maxRows` rows of the list (older ones sit too deep for a round: they are
 * polled by id on their schedule, findUnreachableDueIntents), the rows (of the payee) created at or
 * after it, and the open intents created at that moment. Null when nothing a round covers is open.
 */
export async function openIntentsReach(
  db: Executor,
  payee: string | undefined,
  maxRows: number,
): Promise<OpenIntentsReach | null> {
  const payeeFilter =
    payee === undefined
      ? sql`true`
      : sql`(payee_account_balance_id = ${payee}::uuid or payee_account_balance_id is null)`;
  const cutoff = await roundCutoff(db, payeeFilter, maxRows);
  const { rows } = await sql<{ oldest: Date | null; depth: string }>`
    with oldest_open as (
      select min(created_at) as created_at from rewards.payment_intents
      where status = 'pending' and next_poll_at is not null and ${payeeFilter}
        and (${cutoff}::timestamptz is null or created_at >= ${cutoff}::timestamptz)
    )
    select (select created_at from oldest_open) as oldest,
           (select count(*) from rewards.payment_intents
            where ${payeeFilter} and created_at >= (select created_at from oldest_open)) as depth`.execute(
    db,
  );
  const row = rows[0];
  if (row?.oldest === null || row === undefined) return null;
  const oldest = await db
    .selectFrom('rewards.payment_intents')
    .select('id')
    .where('status', '=', 'pending')
    .where('next_poll_at', 'is not', null)
    .where('created_at', '=', row.oldest)
    .limit(OLDEST_IDS_LIMIT + 1)
    .execute();
  return {
    oldestCreatedAt: row.oldest,
    depth: Number(row.depth),
    oldestIds: oldest.length > OLDEST_IDS_LIMIT ? null : oldest.map((r) => r.id),
  };
}

/** created_at of the `maxRows`-th newest row: rounds do not read below it. Null when the list is shorter. */
async function roundCutoff(
  db: Executor,
  payeeFilter: ReturnType<typeof sql>,
  maxRows: number,
): Promise<Date | null> {
  const { rows } = await sql<{ created_at: Date | null }>`
    select created_at from rewards.payment_intents
    where ${payeeFilter} and created_at is not null
    order by created_at desc offset ${Math.max(0, Math.floor(maxRows) - 1)} limit 1`.execute(db);
  return rows[0]?.created_at ?? null;
}

const OLDEST_IDS_LIMIT = 50;

export interface OpenIntentsReach {
  oldestCreatedAt: Date;
  /** Rows (of the payee) created at or after it. */
  depth: number;
  /**
   * The open intents created at that very moment (null when more than 50): once a round has seen
   * them all, nothing open is left below, even if the page ended on them.
   */
  oldestIds: string[] | null;
}

/** Pending intents still on a poll schedule (the `openIntents` gauge). */
export async function countOpenIntents(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('rewards.payment_intents')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('status', '=', 'pending')
    .where('next_poll_at', 'is not', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
