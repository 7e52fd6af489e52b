import type { Kysely, Transaction } from 'kysely';
import type { RefreshedTokens, ReplacedTokens, StoredTokens, TokenStore } from '../api/oauth/token-store.js';
import type { Executor } from './database.js';
import { saveConnection } from './member-connections.js';
import type { DB } from './schema.js';

// Repository for `rewards.oauth_tokens`, and the TokenStore the OAuth layer is given. Values are
// already sealed (src/api/oauth/token-crypto.ts) by the caller. Functions take a Kysely or a
// Transaction so the caller owns the transaction (and the row lock).

/** The OAuth layer's token store over this database. */
export function createTokenStore(db: Kysely<DB>): TokenStore {
  return {
    read: (row) => readTokens(db, row),
    insertRefreshTokenIfAbsent: (row, sealed, now) => insertRefreshTokenIfAbsent(db, row, sealed, now),
    replace: (row, values) => replaceTokens(db, row, values),
    withRowLock: (row, work) =>
      db.transaction().execute(async (trx) =>
        work(await lockTokens(trx, row), {
          saveRefreshed: (values) => saveRefreshedTokens(trx, row, values),
          recordError: (message, now) => recordTokenError(trx, row, message, now),
        }),
      ),
    replaceMemberGrant: (row, values, connection) =>
      db.transaction().execute(async (trx) => {
        await replaceTokens(trx, row, values);
        await saveConnection(trx, connection);
      }),
  };
}

const COLUMNS = [
  'refresh_token_encrypted',
  'access_token_encrypted',
  'access_token_expires_at',
  'generation',
  'last_refreshed_at',
  'last_error',
  'last_error_at',
] as const;

type Row = {
  refresh_token_encrypted: string | null;
  access_token_encrypted: string | null;
  access_token_expires_at: Date | null;
  generation: number;
  last_refreshed_at: Date | null;
  last_error: string | null;
  last_error_at: Date | null;
};

function toStored(row: Row | undefined): StoredTokens | null {
  if (!row) return null;
  return {
    refreshTokenSealed: row.refresh_token_encrypted,
    accessTokenSealed: row.access_token_encrypted,
    accessTokenExpiresAt: row.access_token_expires_at,
    generation: row.generation,
    lastRefreshedAt: row.last_refreshed_at,
    lastError: row.last_error,
    lastErrorAt: row.last_error_at,
  };
}

export async function readTokens(db: Executor, id: string): Promise<StoredTokens | null> {
  return toStored(
    await db.selectFrom('rewards.oauth_tokens').select(COLUMNS).where('id', '=', id).executeTakeFirst(),
  );
}

/** `select … for update`: the distributed lock under which exactly one process refreshes. */
export async function lockTokens(trx: Transaction<DB>, id: string): Promise<StoredTokens | null> {
  return toStored(
    await trx
      .selectFrom('rewards.oauth_tokens')
      .select(COLUMNS)
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst(),
  );
}

export async function insertRefreshTokenIfAbsent(
  db: Executor,
  id: string,
  refreshSealed: string,
  now: Date,
): Promise<boolean> {
  const result = await db
    .insertInto('rewards.oauth_tokens')
    .values({ id, refresh_token_encrypted: refreshSealed, updated_at: now })
    .onConflict((conflict) => conflict.column('id').doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

export async function replaceTokens(db: Executor, id: string, values: ReplacedTokens): Promise<void> {
  const row = {
    refresh_token_encrypted: values.refreshSealed,
    access_token_encrypted: values.accessSealed,
    access_token_expires_at: values.accessExpiresAt,
    last_refreshed_at: values.accessSealed === null ? null : values.now,
    last_error: null,
    last_error_at: null,
    updated_at: values.now,
  };
  await db
    .insertInto('rewards.oauth_tokens')
    .values({ id, ...row })
    .onConflict((conflict) =>
      conflict
        .column('id')
        .doUpdateSet((eb) => ({ ...row, generation: eb('rewards.oauth_tokens.generation', '+', 1) })),
    )
    .execute();
}

export async function saveRefreshedTokens(
  trx: Transaction<DB>,
  id: string,
  values: RefreshedTokens,
): Promise<void> {
  await trx
    .updateTable('rewards.oauth_tokens')
    .set((eb) => ({
      refresh_token_encrypted: values.refreshSealed,
      access_token_encrypted: values.accessSealed,
      access_token_expires_at: values.accessExpiresAt,
      generation: eb('generation', '+', 1),
      last_refreshed_at: values.now,
      last_error: null,
      last_error_at: null,
      updated_at: values.now,
    }))
    .where('id', '=', id)
    .execute();
}

export async function recordTokenError(db: Executor, id: string, message: string, now: Date): Promise<void> {
  await db
    .updateTable('rewards.oauth_tokens')
    .set({ last_error: message.slice(0, 1000), last_error_at: now, updated_at: now })
    .where('id', '=', id)
    .execute();
}

/** Every member token row's access-token expiry (null: none stored), by row id (`member:<id>`). */
export async function memberAccessTokenExpiries(db: Executor): Promise<Map<string, Date | null>> {
  const rows = await db
    .selectFrom('rewards.oauth_tokens')
    .select(['id', 'access_token_expires_at'])
    .where('id', 'like', 'member:%')
    .execute();
  return new Map(rows.map((row) => [row.id, row.access_token_expires_at]));
}
