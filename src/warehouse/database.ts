import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { DB } from './schema.js';

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
  // An idle client's error (e.g. Postgres restarting) must not crash the process; the next
  // query gets a fresh connection.
  pool.on('error', () => undefined);
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
