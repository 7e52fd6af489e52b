import type { AccountBalance } from '../records/index.js';
import type { Executor } from './database.js';

/**
 * One row per pass: the balance as observed at `observedAt`. The token amount goes in as the
 * digit string it arrived as (numeric(78,0), exact); currencies are already lower-case; fields the
 * parser does not know go in `extra` (docs/schema-drift.md).
 * A second write for the same instant (a retried job) is a no-op.
 */
export async function insertBalanceSnapshot(
  db: Executor,
  balance: AccountBalance,
  observedAt: Date,
): Promise<boolean> {
  const result = await db
    .insertInto('rewards.balance_snapshots')
    .values({
      account_balance_id: balance.id,
      observed_at: observedAt,
      owner_id: balance.ownerId,
      owner_type: balance.ownerType,
      balance_value: balance.balance.value,
      balance_currency: balance.balance.currency,
      balance_usd_cents: balance.balanceUsd.value,
      extra: balance.extra == null ? null : JSON.stringify(balance.extra),
    })
    .onConflict((conflict) => conflict.columns(['account_balance_id', 'observed_at']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** The app wallet id (account_balance_id of the latest snapshot): the payee of our payment intents. */
export async function currentAppWalletId(db: Executor): Promise<string | undefined> {
  const row = await db
    .selectFrom('rewards.balance_snapshots')
    .select('account_balance_id')
    .orderBy('observed_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.account_balance_id;
}
