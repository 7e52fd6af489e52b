import { Migrator, sql, type Kysely } from 'kysely';
import pg from 'pg';
import { migrations } from '../../migrations/index.js';
import { splitDatabaseUrl } from './database.js';
import type { DB } from './schema.js';

const MIGRATION_TABLE_SCHEMA = 'rewards_meta';
/** kysely's default name, kept so that databases migrated by kysely's Migrator read the same. */
const MIGRATION_TABLE = 'kysely_migration';
// Any constant works; it only has to be the same in every process that migrates.
const MIGRATE_LOCK_KEY = 7_100_431_001;

const DUPLICATE_DATABASE = '42P04';
const UNIQUE_VIOLATION = '23505';

/** Creates the database named in `url` when it is missing. Safe when several processes race. */
export async function ensureDatabase(url: string): Promise<{ created: boolean }> {
  const { name, maintenanceUrl } = splitDatabaseUrl(url);
  const client = new pg.Client({ connectionString: maintenanceUrl });
  await client.connect();
  try {
    const existing = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (existing.rowCount) return { created: false };
    await client.query(`create database ${pg.escapeIdentifier(name)}`);
    return { created: true };
  } catch (error) {
    // Two migrators racing: the loser sees one of these; the database exists either way.
    const code = (error as { code?: string }).code;
    if (code === DUPLICATE_DATABASE || code === UNIQUE_VIOLATION) return { created: false };
    throw error;
  } finally {
    await client.end();
  }
}

function createMigrator(db: Kysely<DB>): Migrator {
  return new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(migrations) },
    migrationTableSchema: MIGRATION_TABLE_SCHEMA,
  });
}

export class MigrationError extends Error {
  override readonly name = 'MigrationError';
}

/**
 * The migrations to apply, oldest first, given the names known to this version and those the
 * database has applied (in the order applied). Applied migrations must be the oldest known ones,
 * in order: a database migrated by a newer version, or by a branch with other migrations, is
 * refused rather than patched.
 */
export function pendingMigrations(known: readonly string[], applied: readonly string[]): string[] {
  const sorted = [...known].sort();
  for (const name of applied) {
    if (!sorted.includes(name)) {
      throw new MigrationError(`the database has migration ${name}, which this version does not know`);
    }
  }
  applied.forEach((name, index) => {
    if (sorted[index] !== name) {
      throw new MigrationError(
        `the database's migrations are out of order: ${name} is applied, ${sorted[index] ?? '(none)'} expected`,
      );
    }
  });
  return sorted.slice(applied.length);
}

/**
 * Applies pending migrations in ONE transaction that first takes a transaction-scoped advisory
 * lock: two concurrent `migrate` runs are strictly one after the other (the second waits, then
 * finds nothing pending), and a failed migration leaves nothing behind. Nothing outlives the
 * transaction, so it runs as well through a transaction-mode pooler (PgBouncer, Supabase's port
 * 6543) as straight to Postgres: no session lock that a pooler could strand on a server
 * connection. (kysely's own Migrator takes a session-level lock on a pinned connection, which a
 * transaction-mode pooler splits across server connections, so it is not used to apply.)
 * Bookkeeping stays kysely's table (rewards_meta.kysely_migration), so databases migrated before
 * read the same, and `migrationProgress` reads it through kysely.
 */
export async function migrateToLatest(db: Kysely<DB>): Promise<{ applied: string[] }> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${MIGRATE_LOCK_KEY})`.execute(trx);
    await sql`create schema if not exists ${sql.id(MIGRATION_TABLE_SCHEMA)}`.execute(trx);
    await sql`create table if not exists ${sql.id(MIGRATION_TABLE_SCHEMA, MIGRATION_TABLE)} (
      name varchar(255) not null primary key,
      timestamp varchar(255) not null
    )`.execute(trx);
    const { rows } = await sql<{ name: string; timestamp: string }>`
      select name, timestamp from ${sql.id(MIGRATION_TABLE_SCHEMA, MIGRATION_TABLE)}`.execute(trx);
    // kysely's order: by the time applied, ties by name.
    const applied = rows
      .sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp) || a.name.localeCompare(b.name))
      .map((row) => row.name);
    const pending = pendingMigrations(Object.keys(migrations), applied);
    for (const name of pending) {
      try {
        await migrations[name]!.up(trx);
      } catch (error) {
        throw new MigrationError(`migration ${name} failed`, { cause: error });
      }
      await sql`insert into ${sql.id(MIGRATION_TABLE_SCHEMA, MIGRATION_TABLE)} (name, timestamp)
                values (${name}, ${new Date().toISOString()})`.execute(trx);
    }
    return { applied: pending };
  });
}

/** True when every known migration has been applied: what `/readyz` checks. */
export async function migrationsCurrent(db: Kysely<DB>): Promise<boolean> {
  return (await migrationProgress(db)).pending.length === 0;
}

/** How many known migrations are applied, and the names of those still pending (oldest first). */
export async function migrationProgress(db: Kysely<DB>): Promise<{ applied: number; pending: string[] }> {
  const known = await createMigrator(db).getMigrations();
  const pending = known.filter((migration) => migration.executedAt === undefined).map((m) => m.name);
  return { applied: known.length - pending.length, pending };
}
