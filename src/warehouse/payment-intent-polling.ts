import { sql } from 'kysely';
import type { DueIntent } from '../sync/intent-poll-schedule.js';
import type { Executor } from './database.js';

// What the payment intents pass reads to plan its polling (docs/payment-intents.md, "One pass").

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
