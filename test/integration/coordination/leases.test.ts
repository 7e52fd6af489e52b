import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFeedCheckIn, type CheckIn } from '../../../src/records/index.js';
import { fenced } from '../../../src/leases/fenced-database.js';
import { LeaseLostError } from '../../../src/leases/lease-lost-error.js';
import { windowLease } from '../../../src/leases/lease-names.js';
import { currentProcess } from '../../../src/leases/process-identity.js';
import { withLease } from '../../../src/leases/with-lease.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { pageWindow } from '../../../src/streams/checkins/page-window.js';
import { runStreamPass } from '../../../src/streams/passes.js';
import { commitCheckInPage } from '../../../src/warehouse/check-in-pages.js';
import { acquireLease, listLeases, renewLease } from '../../../src/warehouse/leases.js';
import type { DB } from '../../../src/warehouse/schema.js';
import { insertPlannedWindows, loadWindow } from '../../../src/warehouse/sync-windows.js';
import { dueWindows } from '../../../src/warehouse/sync-window-reads.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { createPipelineHarness, type PipelineHarness } from '../../helpers/pipeline.js';
import { feedCheckIn } from '../../unit/records/fixtures.js';

const HOUR = 3_600_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Ends a lease now, by Postgres's clock (as if its holder had stopped renewing). */
async function expire(db: Kysely<DB>, name: string): Promise<void> {
  await sql`update rewards.leases set expires_at = now() - interval '1 millisecond' where name = ${name}`.execute(
    db,
  );
}

/** Another holder takes `name` over: expired first, then acquired. */
async function takeOver(db: Kysely<DB>, name: string): Promise<string> {
  await expire(db, name);
  const token = await acquireLease(db, { name, holder: 'thief', ttlMs: 60_000 });
  if (token === null) throw new Error('could not take the lease over');
  return token;
}

const count = async (db: Kysely<DB>, table: 'rewards.sync_runs' | 'rewards.check_ins') =>
  Number(
    (
      await db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

function checkIns(window: { start: number }, n: number): CheckIn[] {
  return Array.from({ length: n }, (_, i) => {
    const parsed = parseFeedCheckIn({
      ...feedCheckIn(),
      id: randomUUID(),
      created_at: new Date(window.start + i * 60_000).toISOString(),
    });
    if (!parsed.ok) throw new Error(parsed.rejection.reason);
    return parsed.record;
  });
}

describe('leases in Postgres', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase('leases');
  });
  afterAll(async () => t?.drop());

  it('a held lease is refused to a second holder; once expired it is taken, with a larger fencing token', async () => {
    const first = await acquireLease(t.db, { name: 'exclusive', holder: 'a', ttlMs: 60_000 });
    expect(first).not.toBeNull();
    expect(await acquireLease(t.db, { name: 'exclusive', holder: 'b', ttlMs: 60_000 })).toBeNull();
    await expire(t.db, 'exclusive');
    const second = await acquireLease(t.db, { name: 'exclusive', holder: 'b', ttlMs: 60_000 });
    expect(BigInt(second!)).toBeGreaterThan(BigInt(first!));
    const [row] = (await listLeases(t.db)).filter((lease) => lease.name === 'exclusive');
    expect(row).toMatchObject({ holder: 'b', token: second, live: true });
  });

  it('a renewal never waits behind a write holding the fencing check; a takeover waits until it commits', async () => {
    const name = 'renew-while-writing';
    const token = (await acquireLease(t.db, { name, holder: 'a', ttlMs: 60_000 }))!;
    const leased = fenced(t.db, { name, token });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockHeld = new Promise<void>((resolve) => (locked = resolve));
    // A write under the lease (its transaction begins with the fencing check), kept open.
    const writing = leased.transaction().execute(async (trx) => {
      await trx.insertInto('rewards.sync_runs').values({ stream: 'probe', started_at: new Date() }).execute();
      locked();
      await released;
    });
    await lockHeld;
    try {
      // lock_timeout turns a wait into an error (55P03) rather than a timing.
      const renewed = await t.db.transaction().execute(async (trx) => {
        await sql`set local lock_timeout = '2s'`.execute(trx);
        return renewLease(trx, { name, token, ttlMs: 60_000 });
      });
      expect(renewed).toBe(true);
      await expire(t.db, name);
      await expect(
        t.db.transaction().execute(async (trx) => {
          await sql`set local lock_timeout = '200ms'`.execute(trx);
          return acquireLease(trx, { name, holder: 'thief', ttlMs: 60_000 });
        }),
      ).rejects.toMatchObject({ code: '55P03' });
    } finally {
      release();
      await writing;
    }
    expect(await acquireLease(t.db, { name, holder: 'thief', ttlMs: 60_000 })).not.toBeNull();
  });

  it('a write under a lost lease changes nothing and throws LeaseLostError: in a transaction, as a lone statement, and as the one-statement page commit', async () => {
    const window = { start: Date.parse('2024-05-01T18:00:00Z'), end: Date.parse('2024-05-01T19:00:00Z') };
    await insertPlannedWindows(t.db, [window]);
    const name = windowLease(window);
    const token = (await acquireLease(t.db, { name, holder: 'a', ttlMs: 60_000 }))!;
    const leased = fenced(t.db, { name, token });
    const seenAt = new Date();
    const page = (rows: CheckIn[]) => ({
      window,
      checkIns: rows,
      locations: [],
      rejections: [],
      firstMet: [],
      checkpoint: {
        cursorBefore: new Date(window.end - 60_000),
        cursorPage: 0,
        rows: rows.length,
        apiTotalCount: 10,
        now: seenAt,
      },
      seenAt,
    });
    // Held: every form of write lands.
    await commitCheckInPage(leased, page(checkIns(window, 3)));
    await leased.insertInto('rewards.sync_runs').values({ stream: 'probe', started_at: seenAt }).execute();
    await leased.transaction().execute(async (trx) => {
      await trx.insertInto('rewards.sync_runs').values({ stream: 'probe', started_at: seenAt }).execute();
    });
    expect(await count(t.db, 'rewards.check_ins')).toBe(3);
    expect((await loadWindow(t.db, window))?.pages).toBe(1);

    await takeOver(t.db, name);
    const runs = await count(t.db, 'rewards.sync_runs');
    await expect(commitCheckInPage(leased, page(checkIns(window, 2)))).rejects.toBeInstanceOf(LeaseLostError);
    await expect(
      leased.insertInto('rewards.sync_runs').values({ stream: 'probe', started_at: seenAt }).execute(),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await expect(
      leased.transaction().execute(async (trx) => {
        await trx.insertInto('rewards.sync_runs').values({ stream: 'probe', started_at: seenAt }).execute();
      }),
    ).rejects.toThrow(`lease ${name} lost`);
    expect(await count(t.db, 'rewards.check_ins')).toBe(3);
    expect(await count(t.db, 'rewards.sync_runs')).toBe(runs);
    expect((await loadWindow(t.db, window))?.pages).toBe(1);
    // Reads still work: a read by an old holder changes nothing.
    expect(await leased.selectFrom('rewards.sync_windows').selectAll().execute()).toHaveLength(1);
  });

  it('an UPDATE or DELETE built with kysely carries the lease check in its own statement: it lands while held, touches nothing once lost', async () => {
    const token = (await acquireLease(t.db, { name: 'in-statement', holder: 'a', ttlMs: 60_000 }))!;
    const leased = fenced(t.db, { name: 'in-statement', token });
    const [run] = await t.db
      .insertInto('rewards.sync_runs')
      .values({ stream: 'in-statement', started_at: new Date() })
      .returning('id')
      .execute();
    const update = () =>
      leased.updateTable('rewards.sync_runs').set({ rows: 7 }).where('id', '=', run!.id).executeTakeFirst();
    expect(
      leased.updateTable('rewards.sync_runs').set({ rows: 7 }).where('id', '=', run!.id).compile().sql,
    ).toMatch(/^with "lease_fence" as \(\s*select name from rewards.leases/);
    expect(Number((await update()).numUpdatedRows)).toBe(1);
    // Held, nothing matched: no error.
    await leased.deleteFrom('rewards.sync_runs').where('stream', '=', 'no-such-stream').execute();
    await takeOver(t.db, 'in-statement');
    await t.db.updateTable('rewards.sync_runs').set({ rows: 1 }).where('id', '=', run!.id).execute();
    await expect(update()).rejects.toBeInstanceOf(LeaseLostError);
    await expect(
      leased.deleteFrom('rewards.sync_runs').where('id', '=', run!.id).execute(),
    ).rejects.toBeInstanceOf(LeaseLostError);
    const row = await t.db
      .selectFrom('rewards.sync_runs')
      .select('rows')
      .where('id', '=', run!.id)
      .executeTakeFirst();
    expect(row?.rows).toBe(1);
  });

  it('nested leases: a write fenced by an outer and an inner lease fails once the outer one is lost', async () => {
    const outer = (await acquireLease(t.db, { name: 'outer', holder: 'a', ttlMs: 60_000 }))!;
    const inner = (await acquireLease(t.db, { name: 'inner', holder: 'a', ttlMs: 60_000 }))!;
    const both = fenced(fenced(t.db, { name: 'outer', token: outer }), { name: 'inner', token: inner });
    expect(both.leases.map((lease) => lease.name)).toEqual(['outer', 'inner']);
    await both.insertInto('rewards.sync_runs').values({ stream: 'nested', started_at: new Date() }).execute();
    await takeOver(t.db, 'outer');
    await expect(
      both.insertInto('rewards.sync_runs').values({ stream: 'nested', started_at: new Date() }).execute(),
    ).rejects.toThrow('lease outer lost');
  });

  it('withLease renews while the work runs past the TTL, keeps others out meanwhile, and releases at the end', async () => {
    const outcome = await withLease(t.db, 'long-work', { ttlMs: 1_500 }, async (lease) => {
      await sleep(4_000);
      expect(await acquireLease(t.db, { name: 'long-work', holder: 'b', ttlMs: 1_500 })).toBeNull();
      await lease.db
        .insertInto('rewards.sync_runs')
        .values({ stream: 'long', started_at: new Date() })
        .execute();
      return lease.signal.aborted;
    });
    expect(outcome).toEqual({ acquired: true, value: false });
    expect((await listLeases(t.db)).find((lease) => lease.name === 'long-work')).toBeUndefined();
  });

  it("a lease taken over while its work runs: the work's signal aborts with LeaseLostError, its writes fail, withLease throws", async () => {
    let reason: unknown;
    const running = withLease(t.db, 'stolen', { ttlMs: 1_500 }, async (lease) => {
      await takeOver(t.db, 'stolen');
      // The next renewal (a third of the TTL) is refused.
      await new Promise((resolve) => lease.signal.addEventListener('abort', resolve, { once: true }));
      reason = lease.signal.reason;
      await lease.db
        .insertInto('rewards.sync_runs')
        .values({ stream: 'stolen', started_at: new Date() })
        .execute();
    });
    await expect(running).rejects.toBeInstanceOf(LeaseLostError);
    expect(reason).toBeInstanceOf(LeaseLostError);
    // The thief still holds it: the loser's release did not touch it.
    expect((await listLeases(t.db)).find((lease) => lease.name === 'stolen')).toMatchObject({
      holder: 'thief',
    });
  });

  it('a lease held by a process of this host that is gone is taken over at once; one of another host waits for its expiry', async () => {
    const self = currentProcess();
    const child = spawn(process.execPath, ['-e', '0']);
    await new Promise((resolve) => child.once('exit', resolve));
    const dead = { holder: `here/${child.pid}`, hostKey: self.hostKey, pid: child.pid!, ttlMs: 60_000 };
    await acquireLease(t.db, { name: 'dead-here', ...dead });
    await acquireLease(t.db, { name: 'dead-elsewhere', ...dead, hostKey: 'another-host/pid:[1]' });
    const here = await withLease(t.db, 'dead-here', { ttlMs: 5_000 }, () => Promise.resolve('mine'));
    const elsewhere = await withLease(t.db, 'dead-elsewhere', { ttlMs: 5_000 }, () =>
      Promise.resolve('mine'),
    );
    if (self.hostKey !== null) expect(here).toEqual({ acquired: true, value: 'mine' });
    expect(elsewhere).toMatchObject({ acquired: false, heldBy: { holder: `here/${child.pid}` } });
  });

  it('a running window is due again once its lease has expired, and not before', async () => {
    const window = { start: Date.parse('2024-06-01T00:00:00Z'), end: Date.parse('2024-06-01T01:00:00Z') };
    await insertPlannedWindows(t.db, [window]);
    await t.db
      .updateTable('rewards.sync_windows')
      .set({ status: 'running' })
      .where('window_start', '=', new Date(window.start))
      .execute();
    const isDue = async () =>
      (await dueWindows(t.db)).some((row) => row.window_start.getTime() === window.start);
    // No lease at all (its holder crashed before taking one, or it was released): due.
    expect(await isDue()).toBe(true);
    await acquireLease(t.db, { name: windowLease(window), holder: 'a', ttlMs: 60_000 });
    expect(await isDue()).toBe(false);
    await expire(t.db, windowLease(window));
    expect(await isDue()).toBe(true);
  });
});

describe('work that loses its lease midway reports it, not as a failure', () => {
  let sim: RunningSimulator;
  let t: TestDatabase;
  let h: PipelineHarness;
  const anchor = new Date(Math.floor(Date.now() / HOUR) * HOUR - HOUR);

  beforeAll(async () => {
    sim = await startSimulator({ seed: 27, checkIns: 600, anchor, days: 1 });
    t = await createTestDatabase('lease_lost');
    h = createPipelineHarness({
      sim,
      db: t.db,
      label: 'lease-lost',
      env: { CHECKINS_WINDOW: '12h', SVC_PAGE_SIZE: '20', LEASE_TTL: '3s' },
    });
  });
  afterAll(async () => {
    sim?.control.faults.reset();
    await h?.close();
    await t?.drop();
    await sim?.close();
  });

  it('a check-in window: lease-lost, its checkpoint kept, the window left to the next taker (not failed)', async () => {
    const window = { start: anchor.getTime() - 12 * HOUR, end: anchor.getTime() };
    await insertPlannedWindows(t.db, [window]);
    sim.control.faults.set({ latencyMs: 150 });
    const paging = pageWindow(h.deps, window);
    // Once a page or two are committed, another process takes the lease over.
    for (let i = 0; i < 100 && ((await loadWindow(t.db, window))?.pages ?? 0) < 2; i++) await sleep(50);
    await takeOver(t.db, windowLease(window));
    const outcome = await paging;
    sim.control.faults.reset();
    expect(outcome).toMatchObject({ status: 'lease-lost' });
    const row = await loadWindow(t.db, window);
    expect(row?.status).toBe('running');
    expect(row?.pages).toBeGreaterThanOrEqual(2);
    expect(row?.last_error).toBeNull();
  });

  it('a stream pass whose lease another process holds is skipped, naming the holder and how long the lease may last', async () => {
    await acquireLease(t.db, { name: 'stream:balance', holder: 'host-b/4242', ttlMs: 20_000 });
    const result = await runStreamPass(h.deps, 'balance');
    expect(result).toMatchObject({ stream: 'balance', status: 'skipped' });
    expect('reason' in result && result.reason).toMatch(
      /^another process \(host-b\/4242\) holds the stream lease for up to (19|20) s more unless it renews it/,
    );
  });

  it('a stream pass: lease-lost, its sync_runs row closed as failed naming the lease', async () => {
    sim.control.faults.set({ latencyMs: 300 });
    const pass = runStreamPass(h.deps, 'restaurants');
    for (let i = 0; i < 100 && (await count(t.db, 'rewards.sync_runs')) === 0; i++) await sleep(20);
    await takeOver(t.db, 'stream:restaurants');
    const result = await pass;
    sim.control.faults.reset();
    expect(result).toMatchObject({ stream: 'restaurants', status: 'lease-lost' });
    const run = await t.db
      .selectFrom('rewards.sync_runs')
      .selectAll()
      .where('stream', '=', 'restaurants')
      .executeTakeFirstOrThrow();
    expect(run.status).toBe('failed');
    expect(run.error).toContain('lease stream:restaurants lost');
  });
});
