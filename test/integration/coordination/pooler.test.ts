import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe as vitestDescribe, expect, it } from 'vitest';
import { migrations } from '../../../migrations/index.js';
import { streamLease } from '../../../src/leases/lease-names.js';
import { withLease } from '../../../src/leases/with-lease.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { pageWindow, type WindowOutcome } from '../../../src/streams/checkins/page-window.js';
import type { Window } from '../../../src/sync/windows.js';
import { createDatabase } from '../../../src/warehouse/database.js';
import { listLeases } from '../../../src/warehouse/leases.js';
import { ensureDatabase, migrateToLatest, migrationsCurrent } from '../../../src/warehouse/migrate.js';
import type { DB } from '../../../src/warehouse/schema.js';
import { insertPlannedWindows, loadWindow, resetForRepage } from '../../../src/warehouse/sync-windows.js';
import { createTestDatabase, freshDatabaseUrl, type TestDatabase } from '../../helpers/db.js';
import { createPipelineHarness, type PipelineHarness } from '../../helpers/pipeline.js';
import { ADVISORY_LOCKS_SQL, startPgBouncer, type RunningPgBouncer } from '../../helpers/pgbouncer.js';
import { missingTools } from '../../helpers/optional-tools.js';
import { ADMIN_URL } from '../../helpers/postgres.js';

// The suite is skipped (and named in the run's summary) where Debian's pgbouncer is missing;
// under CI=true that fails instead (test/helpers/optional-tools.ts).
const describe = vitestDescribe.skipIf(missingTools('pgbouncer'));

// Issue 27's reproduction, through Debian's PgBouncer in transaction mode with a pool smaller than
// the clients: 8 holders (each its own pool of 2) share 4 server connections.
const HOLDERS = 8;
const POOL_SIZE = 4;
const ROUNDS = 20;
const STREAMS = ['restaurants', 'locations', 'challenges', 'balance'];
const HOUR = 3_600_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Advisory locks held in `database` right now, asked straight to Postgres (not through the pooler). */
async function advisoryLocks(database: string): Promise<number> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    return (await admin.query<{ n: number }>(ADVISORY_LOCKS_SQL, [database])).rows[0]?.n ?? -1;
  } finally {
    await admin.end();
  }
}

describe('coordination through PgBouncer (transaction mode, pool smaller than the clients)', () => {
  let bouncer: RunningPgBouncer;
  let t: TestDatabase;
  let sim: RunningSimulator;
  const pools: Kysely<DB>[] = [];
  const harnesses: PipelineHarness[] = [];
  const anchor = new Date(Math.floor(Date.now() / HOUR) * HOUR - HOUR);

  beforeAll(async () => {
    bouncer = await startPgBouncer({ poolMode: 'transaction', poolSize: POOL_SIZE });
    t = await createTestDatabase('pooler');
    sim = await startSimulator({ seed: 2727, checkIns: 2_000, anchor, days: 1 });
    for (let i = 0; i < HOLDERS; i++) {
      pools.push(
        createDatabase({ url: bouncer.url(t.name), maxConnections: 2, applicationName: `holder-${i}` }),
      );
    }
  });

  afterAll(async () => {
    await Promise.all(harnesses.map((h) => h.close()));
    await Promise.all(pools.map((db) => db.destroy()));
    await bouncer?.stop();
    await sim?.close();
    await t?.drop();
  });

  it(`stream leases: ${HOLDERS} holders over ${STREAMS.length} streams, ${ROUNDS} rounds each: never two inside one stream, every write fenced, nothing left held`, async () => {
    await sql`create table public.pass_log (stream text, token bigint, started_at timestamptz, finished_at timestamptz)`.execute(
      t.db,
    );
    const inside = new Map<string, number>();
    let overlaps = 0;
    let passes = 0;
    await Promise.all(
      pools.map(async (db, holder) => {
        for (let round = 0; round < ROUNDS; round++) {
          const stream = STREAMS[(holder + round) % STREAMS.length]!;
          const name = streamLease(stream);
          await withLease(db, name, { ttlMs: 10_000, holder: `holder-${holder}` }, async (lease) => {
            inside.set(name, (inside.get(name) ?? 0) + 1);
            if (inside.get(name)! > 1) overlaps++;
            passes++;
            // A pass's writes, through the fenced database: each its own transaction.
            await sql`insert into public.pass_log values (${stream}, ${lease.token}, clock_timestamp(), null)`.execute(
              lease.db,
            );
            await sleep(5 + ((holder * 7 + round * 3) % 20));
            await sql`update public.pass_log set finished_at = clock_timestamp()
                      where stream = ${stream} and token = ${lease.token}`.execute(lease.db);
            inside.set(name, inside.get(name)! - 1);
          });
        }
      }),
    );
    console.log(`[pooler] ${HOLDERS} holders, pool ${POOL_SIZE}: ${passes} passes, ${overlaps} overlaps`);
    expect(overlaps).toBe(0);
    expect(passes).toBeGreaterThan(STREAMS.length);
    // The passes' own record of when each ran: per stream, one after the other.
    const { rows } = await sql<{ stream: string; started_at: Date; finished_at: Date }>`
      select stream, started_at, finished_at from public.pass_log order by stream, started_at`.execute(t.db);
    expect(rows).toHaveLength(passes);
    for (let i = 1; i < rows.length; i++) {
      if (rows[i]!.stream !== rows[i - 1]!.stream) continue;
      expect(rows[i]!.started_at.getTime()).toBeGreaterThanOrEqual(rows[i - 1]!.finished_at.getTime());
    }
    // Checked while PgBouncer still holds its server connections: that is where a session lock would leak.
    expect(await listLeases(t.db)).toEqual([]);
    expect(await advisoryLocks(t.name)).toBe(0);
  });

  it(`window leases: ${HOLDERS} pipelines page the same 2 windows at once, 3 rounds: each window paged once per round, nothing lost or doubled`, async () => {
    const windows: Window[] = [
      { start: anchor.getTime() - 6 * HOUR, end: anchor.getTime() - 3 * HOUR },
      { start: anchor.getTime() - 3 * HOUR, end: anchor.getTime() },
    ];
    await insertPlannedWindows(t.db, windows);
    for (const db of pools) {
      harnesses.push(
        createPipelineHarness({
          sim,
          db,
          label: 'pooler-window',
          env: { SVC_PAGE_SIZE: '25', LEASE_TTL: '10s' },
        }),
      );
    }
    for (let round = 0; round < 3; round++) {
      if (round > 0) {
        for (const window of windows) {
          await resetForRepage(t.db, window, { now: new Date(), reason: 'test round', countAsRepage: false });
        }
      }
      const before = await Promise.all(
        windows.map(async (window) => (await loadWindow(t.db, window))!.attempts),
      );
      const outcomes: WindowOutcome[] = await Promise.all(
        harnesses.flatMap((h) => windows.map((window) => pageWindow(h.deps, window))),
      );
      for (const [index, window] of windows.entries()) {
        const mine = outcomes.filter((outcome) => outcome.window.start === window.start);
        expect(mine.filter((outcome) => outcome.status === 'complete')).toHaveLength(1);
        expect(mine.every((outcome) => outcome.status === 'complete' || outcome.status === 'skipped')).toBe(
          true,
        );
        // One attempt begun per round: no second pager ever started on the window.
        expect((await loadWindow(t.db, window))!.attempts).toBe(before[index]! + 1);
      }
    }
    const api = await harnesses[0]!.deps.api.countCheckIns({
      createdAfter: new Date(windows[0]!.start),
      createdBefore: new Date(windows[1]!.end),
    });
    const stored = await t.db
      .selectFrom('rewards.check_ins')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('created_at', '>=', new Date(windows[0]!.start))
      .where('created_at', '<', new Date(windows[1]!.end))
      .executeTakeFirstOrThrow();
    expect(Number(stored.n)).toBe(api);
    expect(await listLeases(t.db)).toEqual([]);
    expect(await advisoryLocks(t.name)).toBe(0);
  });

  it('migrate: two at once through the pooler apply every migration exactly once and leave no lock held', async () => {
    const target = freshDatabaseUrl('pooler_migrate');
    const url = bouncer.url(target.name);
    const [a, b] = [createDatabase({ url, maxConnections: 2 }), createDatabase({ url, maxConnections: 2 })];
    try {
      await Promise.all([ensureDatabase(url), ensureDatabase(url)]);
      const [resultA, resultB] = await Promise.all([migrateToLatest(a), migrateToLatest(b)]);
      expect([...resultA.applied, ...resultB.applied]).toEqual(Object.keys(migrations));
      expect(await migrateToLatest(b)).toEqual({ applied: [] });
      expect(await migrationsCurrent(a)).toBe(true);
      expect(await advisoryLocks(target.name)).toBe(0);
    } finally {
      await Promise.all([a.destroy(), b.destroy()]);
      // PgBouncer keeps server connections to the new database: drop it with force.
      await target.drop();
    }
  });
});
