import { sql, type Kysely } from 'kysely';

// Leases replace session advisory locks (docs/running-in-production.md, "Leases and fencing"):
// a row per piece of exclusive work (a stream pass, the check-in planner, a check-in window),
// with the holder, a fencing token from a sequence (strictly increasing: a later holder always
// holds a larger token) and an expiry computed by Postgres. A row outlives the connection that
// wrote it, so a transaction-mode pooler (PgBouncer, Supabase's 6543) cannot lose or leak it;
// the holder renews it while the work runs, and a holder killed with kill -9 frees it when it
// expires, or at once when a process on the same host finds it dead (host_key and pid: the kernel
// boot and pid namespace it ran in, and its pid). Every write made under a lease checks the row in
// the same transaction.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create sequence rewards.lease_tokens as bigint;
    create table rewards.leases (
      name text primary key,
      holder text not null,
      host_key text,
      pid integer,
      token bigint not null,
      acquired_at timestamptz not null,
      renewed_at timestamptz not null,
      expires_at timestamptz not null
    );
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop table rewards.leases;
    drop sequence rewards.lease_tokens;
  `.execute(db);
}
