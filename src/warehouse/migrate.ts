import { Migrator, sql, type Kysely, type MigrationResultSet } from 'kysely';
import pg from 'pg';
import { migrations } from '../../migrations/index.js';
import { splitDatabaseUrl } from './database.js';
import type { DB } from './schema.js';

const MIGRATION_TABLE_SCHEMA = 'rewards_meta';
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
 * Applies pending migrations. Kysely's migrator locks around applying, but creates its own
 * bookkeeping tables before taking that lock; a session advisory lock around the whole
 * call makes two concurrent `migrate` runs strictly one after the other.
 */
export async function migrateToLatest(db: Kysely<DB>): Promise<{ applied: string[] }> {
  return db.connection().execute(async (connection) => {
    await sql`select pg_advisory_lock(${MIGRATE_LOCK_KEY})`.execute(connection);
    try {
      const result: MigrationResultSet = await createMigrator(db).migrateToLatest();
      if (result.error !== undefined) {
        const failed = result.results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
        throw new MigrationError(`migration ${failed} failed`, { cause: result.error });
      }
      return { applied: (result.results ?? []).map((r) => r.migrationName) };
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATE_LOCK_KEY})`.execute(connection);
    }
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
