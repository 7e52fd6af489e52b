import { createDatabase } from '../../src/warehouse/database.js';
import { ensureDatabase, migrateToLatest } from '../../src/warehouse/migrate.js';
import type { TestDatabase } from './db.js';
import type { ThrowawayPostgres } from './throwaway-postgres.js';

/** A migrated database on a throw-away cluster (the cluster goes with `server.stop()`; `drop` only closes the pool). */
export async function createMigratedDatabase(server: ThrowawayPostgres, name: string): Promise<TestDatabase> {
  const url = server.url(name);
  await ensureDatabase(url);
  const migrator = createDatabase({ url, maxConnections: 2 });
  try {
    await migrateToLatest(migrator);
  } finally {
    await migrator.destroy();
  }
  const db = createDatabase({ url, maxConnections: 5 });
  return { name, url, db, drop: () => db.destroy() };
}
