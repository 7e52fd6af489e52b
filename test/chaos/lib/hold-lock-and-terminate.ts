// Child-process probe for restarts.test.ts: holds a lease (as every window and stream pass does),
// has Postgres terminate every session of this process mid-work (what a Postgres restart, an
// idle_session_timeout or a NAT does to connections), then reports whether the process is still
// alive and still holds its lease: nothing of a lease lives in a connection, so losing them all
// costs nothing as long as Postgres is back within the lease's TTL.
// Run: node --import tsx <this file> <database url>.
import { sql } from 'kysely';
import { withLease } from '../../../src/leases/with-lease.js';
import { createDatabase } from '../../../src/warehouse/database.js';

const url = process.argv[2];
if (url === undefined) throw new Error('usage: hold-lock-and-terminate <database url>');
const db = createDatabase({ url, maxConnections: 3, applicationName: 'chaos-lock-probe' });
try {
  const outcome = await withLease(db, 'chaos-probe', { ttlMs: 6_000 }, async (lease) => {
    // Terminate every session of ours except the one asking (idle pool clients included).
    await sql`select pg_terminate_backend(pid) from pg_stat_activity
              where application_name = 'chaos-lock-probe' and pid <> pg_backend_pid()`.execute(db);
    // Two renewals' worth of time: they reconnect through the pool.
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    // A fenced write still passes the lease check: the lease survived its connections.
    await lease.db.transaction().execute(async (trx) => {
      await sql`select 1`.execute(trx);
    });
    return 'lease held';
  });
  await new Promise((resolve) => setTimeout(resolve, 500));
  process.stdout.write(`survived${outcome.acquired ? `, ${outcome.value}` : ''}\n`);
} finally {
  await db.destroy().catch(() => undefined);
}
