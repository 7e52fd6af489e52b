import { sql } from 'kysely';
import {
  planClosures,
  planVersions,
  type LatestVersion,
  type VersionCandidate,
  type VersionPlan,
} from '../sync/scd2.js';
import type { Executor } from './database.js';

export type HistoryTableName =
  | 'rewards.restaurants_history'
  | 'rewards.locations_history'
  | 'rewards.challenges_history'
  | 'rewards.member_statuses_history'
  | 'rewards.memberships_history';

/** The latest version (current, or closed by a deletion) of each of `ids` that has one. */
export async function latestVersions(
  db: Executor,
  table: HistoryTableName,
  ids: readonly string[],
  rehashStored?: RehashStored,
): Promise<Map<string, LatestVersion>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom(table)
    .distinctOn('id')
    .select(['id', 'content_hash', 'valid_from', 'valid_to'])
    // The stored raw only when it is rehashed (`resync`): scheduled passes do not read it back.
    .$if(rehashStored !== undefined, (query) => query.select('raw'))
    .where('id', '=', sql<string>`any(${[...new Set(ids)]}::uuid[])`)
    .orderBy('id')
    .orderBy('valid_from', 'desc')
    .execute();
  return new Map(
    rows.map((row) => [
      row.id,
      {
        // A version whose stored raw no longer rehashes (under today's rules) to something can never match.
        hash:
          rehashStored === undefined
            ? row.content_hash
            : (rehashStored(row.raw) ?? `unhashable:${row.content_hash}`),
        validFrom: row.valid_from,
        validTo: row.valid_to,
      },
    ]),
  );
}

/**
 * `resync` (docs/resync.md): the hash of a stored version recomputed from its stored raw record,
 * instead of trusting its `content_hash` column. A version written by an older release (whose rules
 * ignored a field) or edited by hand is then compared by what it holds. null: the stored raw no
 * longer parses, so it cannot equal anything read now.
 */
export type RehashStored = (storedRaw: unknown) => string | null;

/**
 * Writes a new version for every candidate whose content hash differs from its current version.
 * Call inside the transaction that writes the current rows, after locking them, so two writers of
 * the same record serialize; the partial unique index on `(id) where valid_to is null` is the
 * backstop (a losing concurrent insert is skipped, never a second current version).
 */
export async function recordVersions(
  db: Executor,
  table: HistoryTableName,
  candidates: readonly VersionCandidate[],
  at: Date,
  rehashStored?: RehashStored,
): Promise<VersionPlan> {
  const latest = await latestVersions(
    db,
    table,
    candidates.map((c) => c.id),
    rehashStored,
  );
  // In id order, like the row writes, so concurrent writers never wait on each other in a cycle.
  const sorted = [...candidates].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const plan = planVersions(latest, sorted, at);
  await closeVersionRows(db, table, plan.close);
  for (const chunk of statementChunks(plan.open, 5)) {
    await db
      .insertInto(table)
      .values(
        chunk.map((version) => ({
          id: version.id,
          valid_from: version.validFrom,
          valid_to: null,
          content_hash: version.hash,
          raw: JSON.stringify(version.raw),
        })),
      )
      .onConflict((conflict) => conflict.doNothing())
      .execute();
  }
  return plan;
}

/**
 * Marks records of a snapshot table deleted (those not already marked) and ends their current
 * history version at `at`, in the caller's transaction. Returns how many were newly marked.
 */
export async function markDeleted(
  trx: Executor,
  tables: { current: 'rewards.restaurants' | 'rewards.challenges'; history: HistoryTableName },
  ids: readonly string[],
  at: Date,
): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await trx
    .updateTable(tables.current)
    .set({ deleted_at: at })
    .where('id', '=', sql<string>`any(${[...ids]}::uuid[])`)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  await closeCurrentVersions(trx, tables.history, ids, at);
  return Number(result.numUpdatedRows);
}

/** Closes the current versions of records marked deleted, so "state at time T" finds none after T. */
export async function closeCurrentVersions(
  db: Executor,
  table: HistoryTableName,
  ids: readonly string[],
  at: Date,
): Promise<number> {
  const close = planClosures(await latestVersions(db, table, ids), ids, at);
  await closeVersionRows(db, table, close);
  return close.length;
}

async function closeVersionRows(
  db: Executor,
  table: HistoryTableName,
  close: VersionPlan['close'],
): Promise<void> {
  if (close.length === 0) return;
  // One statement: per-id end times come in as parallel arrays.
  await sql`
    update ${sql.table(table)} as h
    set valid_to = c.valid_to
    from unnest(${close.map((c) => c.id)}::uuid[], ${close.map((c) => c.validTo.toISOString())}::timestamptz[])
      as c(id, valid_to)
    where h.id = c.id and h.valid_to is null`.execute(db);
}

/**
 * Splits rows so one multi-row statement stays under Postgres' 65,535 bind parameters
 * (SVC_PAGE_SIZE may be up to 10,000); at the default page size a page is one statement.
 */
export function statementChunks<T>(rows: readonly T[], columnsPerRow: number): T[][] {
  const size = Math.max(1, Math.floor(60_000 / Math.max(1, columnsPerRow)));
  const chunks: T[][] = [];
  for (let start = 0; start < rows.length; start += size) chunks.push(rows.slice(start, start + size));
  return chunks;
}
