// Child-process probe for restarts.test.ts: holds an advisory lock (as every window and stream pass
// does), has Postgres terminate that lock's session (what a Postgres restart does to every session),
// then reports whether the process is still alive. Run: node --import tsx <this file> <database url>.
import { sql } from 'kysely';
import { createDatabase } from '../../../src/warehouse/database.js';
import { withAdvisoryLock } from '../../../src/warehouse/sync-runs.js';

const url = process.argv[2];
if (url === undefined) throw new Error('usage: hold-lock-and-terminate <database url>');
const db = createDatabase({ url, maxConnections: 3, applicationName: 'chaos-lock-probe' });
try {
  await withAdvisoryLock(db, 'chaos-probe', async () => {
    // The lock's connection is checked out and idle now; terminate every other session of ours.
    await sql`select pg_terminate_backend(pid) from pg_stat_activity
              where application_name = 'chaos-lock-probe' and pid <> pg_backend_pid()`.execute(db);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }).catch(() => undefined); // the unlock on a dead connection may fail: that is fine
  await new Promise((resolve) => setTimeout(resolve, 500));
  process.stdout.write('survived\n');
} finally {
  await db.destroy().catch(() => undefined);
}
