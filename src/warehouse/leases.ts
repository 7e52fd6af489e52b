import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Executor } from './database.js';
import type { DB } from './schema.js';

// The rewards.leases table (migration 0007). Every time is Postgres's own now(): the worker's
// clock never decides whether a lease is held. The fencing token comes from a sequence, so a
// later holder of a name always has a larger token than every earlier one.

/** A lease as its holder knows it: its name and the token it was granted. */
export interface LeaseRef {
  name: string;
  /** int8, as a string (exact). */
  token: string;
}

/**
 * How a database fenced by leases (LeasedDatabase, src/leases/fenced-database.ts) shows its fence
 * to a statement that carries its own lease check (the one-statement page commit of
 * check-in-pages.ts): its leases, the database under the fencing, and the error a lost lease is.
 * Declared here, below the leases layer, so the warehouse reads it without importing that layer.
 */
export interface LeaseFence {
  readonly leases: readonly LeaseRef[];
  readonly unfenced: Kysely<DB>;
  lostLeaseError(heldNames: readonly string[]): Error;
}

/** The property a fenced database keeps its LeaseFence under. */
export const LEASE_FENCE: unique symbol = Symbol('lease fence');

/** `db`'s fence, or undefined when no lease fences it. */
export function leaseFenceOf(db: Kysely<DB>): LeaseFence | undefined {
  return (db as Kysely<DB> & { [LEASE_FENCE]?: LeaseFence })[LEASE_FENCE];
}

const ttl = (ttlMs: number) => sql`${Math.max(1, Math.round(ttlMs))} * interval '1 millisecond'`;

/**
 * Takes the lease `name` for `ttlMs` if nobody holds it (no row, or the row has expired), in one
 * statement. Returns the fencing token, or null when another holder has it. Two acquirers racing
 * serialize on the row: the second re-checks `expires_at` against the first's fresh expiry.
 */
export async function acquireLease(
  db: Executor,
  input: { name: string; holder: string; hostKey?: string | null; pid?: number | null; ttlMs: number },
): Promise<string | null> {
  const { rows } = await sql<{ token: string }>`
    insert into rewards.leases as l (name, holder, host_key, pid, token, acquired_at, renewed_at, expires_at)
    values (${input.name}, ${input.holder}, ${input.hostKey ?? null}, ${input.pid ?? null},
            nextval('rewards.lease_tokens'), now(), now(), now() + ${ttl(input.ttlMs)})
    on conflict (name) do update
      set holder = excluded.holder, host_key = excluded.host_key, pid = excluded.pid, token = excluded.token,
          acquired_at = excluded.acquired_at, renewed_at = excluded.renewed_at, expires_at = excluded.expires_at
      where l.expires_at <= now()
    returning l.token`.execute(db);
  return rows[0]?.token ?? null;
}

/**
 * Ends a lease at once, if `token` still holds it: for a holder known to be dead (a process of
 * this host that no longer exists). Safe even if that judgement were wrong: the holder's writes
 * are fenced by the token, so it would only lose its work, never write beside the next holder.
 */
export async function expireLease(db: Executor, lease: LeaseRef): Promise<boolean> {
  const result = await sql`
    update rewards.leases set expires_at = now()
    where name = ${lease.name} and token = ${lease.token}::bigint and expires_at > now()`.execute(db);
  return Number(result.numAffectedRows ?? 0n) === 1;
}

/** Extends a lease still held by this token. False: it expired, or another holder took it. */
export async function renewLease(db: Executor, lease: LeaseRef & { ttlMs: number }): Promise<boolean> {
  const { rows } = await sql<{ token: string }>`
    update rewards.leases
    set renewed_at = now(), expires_at = now() + ${ttl(lease.ttlMs)}
    where name = ${lease.name} and token = ${lease.token}::bigint and expires_at > now()
    returning token`.execute(db);
  return rows.length === 1;
}

/** Gives a lease back (a no-op when this token no longer holds it). */
export async function releaseLease(db: Executor, lease: LeaseRef): Promise<void> {
  await sql`delete from rewards.leases where name = ${lease.name} and token = ${lease.token}::bigint`.execute(
    db,
  );
}

/**
 * The fencing check: the names of `leases` still held by their tokens, each row locked FOR KEY
 * SHARE until the transaction ends. `token` is a key column (unique (name, token), migration
 * 0013), so an acquirer's `on conflict do update` of the token is a key update and waits for this
 * lock: no other holder can take a lease between this check and the commit of the writes after
 * it, and an old holder's writes land before a new holder starts, or not at all. A renewal only
 * moves expires_at (FOR NO KEY UPDATE) and never waits behind a page write. Fewer rows than
 * leases: a lease is lost.
 */
export function heldLeasesQuery(leases: readonly LeaseRef[]): RawBuilder<{ name: string }> {
  const pairs = sql.join(leases.map((lease) => sql`(${lease.name}::text, ${lease.token}::bigint)`));
  return sql<{ name: string }>`
    select name from rewards.leases
    where (name, token) in (${pairs}) and expires_at > now()
    for key share`;
}

export interface LeaseHolder {
  holder: string;
  hostKey: string | null;
  pid: number | null;
  token: string;
  /** How long the lease lasts unless renewed, by Postgres's clock. */
  expiresInMs: number;
}

/** Who holds `name` now; null when nobody does. */
export async function leaseHolder(db: Executor, name: string): Promise<LeaseHolder | null> {
  const { rows } = await sql<{
    holder: string;
    host_key: string | null;
    pid: number | null;
    token: string;
    ms: number;
  }>`
    select holder, host_key, pid, token, (extract(epoch from expires_at - now()) * 1000)::float8 as ms
    from rewards.leases where name = ${name} and expires_at > now()`.execute(db);
  const row = rows[0];
  return row === undefined
    ? null
    : {
        holder: row.holder,
        hostKey: row.host_key,
        pid: row.pid,
        token: row.token,
        expiresInMs: Math.max(0, Number(row.ms)),
      };
}

export interface LeaseRow {
  name: string;
  holder: string;
  token: string;
  acquiredAt: Date;
  expiresAt: Date;
  /** Whether it is still held (expires_at > now() by Postgres's clock). */
  live: boolean;
}

/** Every lease row, live or expired (status, tests). */
export async function listLeases(db: Executor): Promise<LeaseRow[]> {
  const { rows } = await sql<{
    name: string;
    holder: string;
    token: string;
    acquired_at: Date;
    expires_at: Date;
    live: boolean;
  }>`select name, holder, token, acquired_at, expires_at, expires_at > now() as live
     from rewards.leases order by name`.execute(db);
  return rows.map((row) => ({
    name: row.name,
    holder: row.holder,
    token: row.token,
    acquiredAt: row.acquired_at,
    expiresAt: row.expires_at,
    live: row.live,
  }));
}
