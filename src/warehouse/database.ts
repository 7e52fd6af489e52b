import { Kysely, PostgresDialect, sql, type RawBuilder, type Transaction } from 'kysely';
import pg from 'pg';
import type { DB } from './schema.js';

/** What a repository function writes through: the pool, or the caller's transaction. */
export type Executor = Kysely<DB> | Transaction<DB>;

export interface DatabaseOptions {
  url: string;
  maxConnections?: number;
  applicationName?: string;
}

export function createDatabase(options: DatabaseOptions): Kysely<DB> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    application_name: options.applicationName ?? 'rewards-etl',
    // A restarted Postgres leaves dead sockets in the pool: fail fast and let the caller retry.
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
  });
  // A client's error (Postgres restarting, its session terminated) must not crash the process.
  // pg-pool listens on idle clients only ('error' on the pool); a checked-out one (a transaction
  // in progress) needs its own listener. The query in flight still fails with the error, and the
  // broken client is discarded when released.
  // Nothing relies on a session: no session advisory lock, no SET without LOCAL, no named
  // prepared statement, no LISTEN. So each transaction may land on a different server connection
  // (a transaction-mode pooler: PgBouncer, Supabase's port 6543).
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}

/** The database name in a postgres:// URL, and the same URL pointed at the maintenance database. */
export function splitDatabaseUrl(url: string): { name: string; maintenanceUrl: string } {
  const parsed = new URL(url);
  const name = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (name === '') throw new Error('the database URL names no database');
  parsed.pathname = '/postgres';
  return { name, maintenanceUrl: parsed.toString() };
}

/**
 * `on conflict … do update set c = excluded.c` for each column: a newer read overwrites these.
 * (Typed `never` so each fits whatever type its column has: `excluded.c` has exactly that type.)
 */
export function fromExcluded<C extends string>(columns: readonly C[]): Record<C, RawBuilder<never>> {
  const set = columns.map((column) => [column, sql.ref<never>(`excluded.${column}`)]);
  return Object.fromEntries(set) as Record<C, RawBuilder<never>>;
}
