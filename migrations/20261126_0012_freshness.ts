import { sql, type Kysely } from 'kysely';

// Adaptive read cadence (docs/freshness.md): one row per record read on a learned schedule (a
// member's visits, status, wallets, tags, memberships, profile), with when it was last read, when
// a read last found it changed, the interval learned and when it is due next. The counters give
// the share of reads that found nothing new. Times are the pipeline's clock (Postgres's).
// `if not exists`: safe to re-run; the migrator applies it under its transaction lock.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table if not exists rewards.record_reads (
      kind text not null,
      record_id text not null,
      last_read_at timestamptz not null,
      last_changed_at timestamptz,
      interval_seconds integer not null check (interval_seconds > 0),
      next_due_at timestamptz not null,
      reads bigint not null default 0,
      unchanged_reads bigint not null default 0,
      primary key (kind, record_id)
    );
    create index if not exists record_reads_record on rewards.record_reads (record_id);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists rewards.record_reads`.execute(db);
}
