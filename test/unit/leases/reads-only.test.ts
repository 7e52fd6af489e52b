import { CompiledQuery, Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { readsOnly } from '../../../src/leases/fenced-database.js';
import type { DB } from '../../../src/warehouse/schema.js';

// Compiling needs no connection: a pool that is never used.
const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: new pg.Pool({ max: 1 }) }) });

describe('which statements a leased database lets through unfenced outside a transaction', () => {
  it('plain reads: kysely selects and raw selects that name nothing that writes or locks', () => {
    expect(readsOnly(db.selectFrom('rewards.sync_windows').selectAll().compile())).toBe(true);
    expect(readsOnly(sql`select count(*) from rewards.check_ins`.compile(db))).toBe(true);
  });

  it('everything else is fenced: writes, locking reads, CTEs, sequences, settings, advisory locks', () => {
    const fencedOnes = [
      db.updateTable('rewards.sync_windows').set({ pages: 1 }).compile(),
      db.insertInto('rewards.sync_runs').values({ stream: 's', started_at: new Date() }).compile(),
      db.deleteFrom('rewards.leases').compile(),
      db.selectFrom('rewards.alerts').selectAll().forUpdate().compile(),
      sql`with x as (update rewards.alerts set attempts = 1 returning id) select * from x`.compile(db),
      sql`select nextval('rewards.lease_tokens')`.compile(db),
      sql`select set_config('synchronous_commit', 'off', true)`.compile(db),
      sql`select pg_advisory_xact_lock(1)`.compile(db),
      sql`select 1 from rewards.leases for share`.compile(db),
      CompiledQuery.raw('vacuum'),
    ];
    for (const query of fencedOnes) expect(readsOnly(query), query.sql).toBe(false);
  });
});
