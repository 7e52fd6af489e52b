import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe as vitestDescribe, expect, it } from 'vitest';
import { LeaseLostError } from '../../../src/leases/lease-lost-error.js';
import { withLease, type HeldLease } from '../../../src/leases/with-lease.js';
import { createDatabase } from '../../../src/warehouse/database.js';
import type { DB } from '../../../src/warehouse/schema.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { startPgBouncer, type RunningPgBouncer } from '../../helpers/pgbouncer.js';
import { missingTools } from '../../helpers/optional-tools.js';
import { ADMIN_URL } from '../../helpers/postgres.js';

// The suite is skipped (and named in the run's summary) where Debian's pgbouncer is missing;
// under CI=true that fails instead (test/helpers/optional-tools.ts).
const describe = vitestDescribe.skipIf(missingTools('pgbouncer'));

const LEASE = 'stream:probe';
const TTL_MS = 3_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One write of a pass, through the leased database: the token, an order from a sequence, the time. */
const write = (lease: HeldLease, holder: string) =>
  sql`insert into public.fence_probe (holder, token, seq, written_at)
      values (${holder}, ${lease.token}, nextval('public.fence_seq'), clock_timestamp())`.execute(lease.db);

// Issue 27, item 2: the connection of a lock holder is cut mid-pass. Here holder A reaches Postgres
// through its own PgBouncer; the test terminates A's server sessions (pg_terminate_backend) and
// keeps A's path down (PgBouncer stopped with SIGSTOP) past the lease's TTL, as a NAT or a load
// balancer cutting idle connections and a network outage do. A keeps trying to write, ignoring
// its signal (the worst case). Holder B, straight to Postgres, takes the lease once it expires and
// writes; then A's path comes back while B holds the lease.
describe("a lease holder whose backends are terminated and whose path is down: no write of the old holder lands after the new holder's", () => {
  let bouncer: RunningPgBouncer;
  let t: TestDatabase;
  let dbA: Kysely<DB>;
  let dbB: Kysely<DB>;

  beforeAll(async () => {
    bouncer = await startPgBouncer({ poolMode: 'transaction', poolSize: 4 });
    t = await createTestDatabase('fencing');
    dbA = createDatabase({ url: bouncer.url(t.name), maxConnections: 3, applicationName: 'holder-a' });
    dbB = createDatabase({ url: t.url, maxConnections: 3, applicationName: 'holder-b' });
    await sql`create sequence public.fence_seq`.execute(t.db);
    await sql`create table public.fence_probe (holder text, token bigint, seq bigint, written_at timestamptz)`.execute(
      t.db,
    );
  });

  afterAll(async () => {
    await dbA?.destroy();
    await dbB?.destroy();
    await bouncer?.stop();
    await t?.drop();
  });

  it('the old holder stops at its deadline, the new one takes over, and every later write of the old one is refused', async () => {
    const a = { written: 0, refused: 0, otherErrors: 0, stop: false, token: '', aborted: false };
    const holderA = withLease(dbA, LEASE, { ttlMs: TTL_MS, holder: 'A' }, async (lease) => {
      a.token = lease.token;
      while (!a.stop) {
        try {
          await write(lease, 'A');
          a.written++;
        } catch (error) {
          if (error instanceof LeaseLostError) a.refused++;
          else a.otherErrors++; // its session was terminated, or its path timed out
        }
        a.aborted = lease.signal.aborted;
        await sleep(50);
      }
    });
    const settledA = holderA.then(
      () => null,
      (error: unknown) => error,
    );
    while (a.written < 5) await sleep(20);

    // Cut A off: its path hangs, and its server sessions are terminated.
    bouncer.pause();
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    const terminated = await admin
      .query<{ ok: boolean }>(
        `select pg_terminate_backend(pid) as ok from pg_stat_activity
         where datname = $1 and pid <> pg_backend_pid() and application_name <> 'holder-b'`,
        [t.name],
      )
      .then((killed) => killed.rows.filter((row) => row.ok).length)
      .finally(() => admin.end());

    // B tries until A's lease has expired (A cannot renew it), then writes while holding it; A's
    // path comes back in the middle of B's tenure.
    let tokenB = '';
    for (;;) {
      const outcome = await withLease(dbB, LEASE, { ttlMs: TTL_MS, holder: 'B' }, async (lease) => {
        tokenB = lease.token;
        for (let i = 0; i < 30; i++) {
          await write(lease, 'B');
          if (i === 3) bouncer.resume();
          await sleep(50);
        }
      });
      if (outcome.acquired) break;
      await sleep(200);
    }
    a.stop = true;
    const errorA = await settledA;

    expect(errorA).toBeInstanceOf(LeaseLostError);
    expect(a.aborted).toBe(true);
    expect(a.refused).toBeGreaterThan(0);
    expect(BigInt(tokenB)).toBeGreaterThan(BigInt(a.token));
    const { rows } = await sql<{ holder: string; token: string; seq: string; written_at: Date }>`
      select holder, token, seq, written_at from public.fence_probe order by seq`.execute(t.db);
    const rowsA = rows.filter((row) => row.holder === 'A');
    const rowsB = rows.filter((row) => row.holder === 'B');
    expect(rowsA.length).toBeGreaterThanOrEqual(5);
    expect(rowsB).toHaveLength(30);
    expect(rowsA.every((row) => row.token === a.token)).toBe(true);
    // Every write of A is ordered before every write of B, by sequence and by Postgres's clock.
    const lastA = rowsA.at(-1)!;
    const firstB = rowsB[0]!;
    expect(BigInt(lastA.seq)).toBeLessThan(BigInt(firstB.seq));
    expect(lastA.written_at.getTime()).toBeLessThanOrEqual(firstB.written_at.getTime());
    expect(terminated).toBeGreaterThan(0);
    console.log(
      `[fencing] ${terminated} backends terminated; A wrote ${rowsA.length} rows (token ${a.token}), then ${a.refused} writes refused; B wrote ${rowsB.length} (token ${tokenB}); A rows after B's first: 0`,
    );
  });
});
