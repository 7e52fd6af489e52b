import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { migrations } from '../../migrations/index.js';
import { createDatabase, splitDatabaseUrl } from '../../src/warehouse/database.js';
import { ensureDatabase, migrateToLatest } from '../../src/warehouse/migrate.js';

/**
 * Times migrations 0008 and 0009 on an install as 0.1 left it (every migration up to 0007) whose
 * check_ins holds `rows` rows over a year (loaded without indexes, then indexed as 0.1 indexes
 * it, then vacuumed). Returns the seconds `migrate` took; the database is dropped after.
 */
export async function timePartitionMigration(
  baseUrl: string,
  rows: number,
  progress: (text: string) => void,
): Promise<{ seconds: number; applied: string[] }> {
  const name = `rewards_etl_bench_migration_${randomBytes(4).toString('hex')}`;
  const parsed = new URL(baseUrl);
  parsed.pathname = `/${name}`;
  const url = parsed.toString();
  await ensureDatabase(url);
  const db = createDatabase({ url, maxConnections: 2, applicationName: 'rewards-etl-bench' });
  try {
    const before = Object.keys(migrations)
      .sort()
      .filter((migration) => migration < '20261126');
    await db.transaction().execute(async (trx) => {
      await sql`create schema rewards_meta`.execute(trx);
      await sql`create table rewards_meta.kysely_migration (name varchar(255) primary key, timestamp varchar(255) not null)`.execute(
        trx,
      );
      for (const migration of before) {
        await migrations[migration]!.up(trx);
        await sql`insert into rewards_meta.kysely_migration values (${migration}, ${new Date().toISOString()})`.execute(
          trx,
        );
      }
    });
    progress(`loading ${rows.toLocaleString('en')} rows into the 0.1 check_ins`);
    await sql`
      alter table rewards.check_ins drop constraint check_ins_pkey;
      drop index rewards.check_ins_created_at_idx, rewards.check_ins_restaurant_created_idx,
        rewards.check_ins_location_created_idx, rewards.check_ins_ongoing_idx, rewards.check_ins_first_seen_idx;
    `.execute(db);
    await sql`
      insert into rewards.check_ins
        (id, location_id, restaurant_id, svc_pay_enabled, created_at, ended_at, first_seen_at, last_seen_at)
      select gen_random_uuid(), md5('loc' || l)::uuid, md5('rest' || (l / 4))::uuid, random() < 0.7,
        c, case when random() < 0.03 then null else c + (20 + random() * 120) * interval '1 minute' end,
        c + interval '3 hours', c + interval '3 hours'
      from (
        select now() - random() * interval '365 days' as c, (g % 200) as l from generate_series(1, ${rows}) g
      ) s`.execute(db);
    progress('indexing it as 0.1 does, then vacuum');
    await sql`
      set maintenance_work_mem = '256MB';
      alter table rewards.check_ins add primary key (id);
      create index check_ins_created_at_idx on rewards.check_ins (created_at);
      create index check_ins_restaurant_created_idx on rewards.check_ins (restaurant_id, created_at);
      create index check_ins_location_created_idx on rewards.check_ins (location_id, created_at);
      create index check_ins_ongoing_idx on rewards.check_ins (created_at) where ended_at is null;
      create index check_ins_first_seen_idx on rewards.check_ins (first_seen_at);
    `.execute(db);
    await sql`vacuum (analyze) rewards.check_ins`.execute(db);
    progress('migrate (0008 partitions, 0009 rollup)');
    const started = performance.now();
    const { applied } = await migrateToLatest(db);
    return { seconds: (performance.now() - started) / 1000, applied };
  } finally {
    await db.destroy();
    const admin = createDatabase({ url: splitDatabaseUrl(url).maintenanceUrl, maxConnections: 1 });
    try {
      await sql`drop database if exists ${sql.id(name)} with (force)`.execute(admin);
    } finally {
      await admin.destroy();
    }
  }
}
