import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { createDatabase, splitDatabaseUrl } from '../../src/warehouse/database.js';
import { ensureDatabase, migrateToLatest } from '../../src/warehouse/migrate.js';
import type { DB } from '../../src/warehouse/schema.js';

export interface BenchDatabase {
  name: string;
  url: string;
  db: Kysely<DB>;
  drop(): Promise<void>;
}

/** A fresh, migrated database named rewards_etl_bench_<label>_<random> next to `baseUrl`'s. */
export async function createBenchDatabase(baseUrl: string, label: string): Promise<BenchDatabase> {
  const name = `rewards_etl_bench_${label}_${randomBytes(4).toString('hex')}`;
  const parsed = new URL(baseUrl);
  parsed.pathname = `/${name}`;
  const url = parsed.toString();
  await ensureDatabase(url);
  const db = createDatabase({ url, maxConnections: 4, applicationName: 'rewards-etl-bench' });
  await migrateToLatest(db);
  return {
    name,
    url,
    db,
    async drop() {
      await db.destroy();
      const admin = createDatabase({ url: splitDatabaseUrl(url).maintenanceUrl, maxConnections: 1 });
      try {
        await sql`drop database if exists ${sql.id(name)} with (force)`.execute(admin);
      } finally {
        await admin.destroy();
      }
    },
  };
}
