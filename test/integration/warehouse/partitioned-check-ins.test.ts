import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../../migrations/index.js';
import { parseFeedCheckIn, type CheckIn } from '../../../src/records/index.js';
import { fixedClock } from '../../../src/clock.js';
import { loadConfig } from '../../../src/config/config.js';
import { createLogger } from '../../../src/log.js';
import { planCheckinWindows } from '../../../src/streams/checkins/plan.js';
import { upsertCheckInPage } from '../../../src/warehouse/check-ins.js';
import { compareRollupWithRows } from '../../../src/warehouse/check-ins-daily.js';
import { listCheckInPartitions } from '../../../src/warehouse/check-in-partitions.js';
import { createDatabase } from '../../../src/warehouse/database.js';
import { ensureDatabase, migrateToLatest } from '../../../src/warehouse/migrate.js';
import type { DB } from '../../../src/warehouse/schema.js';
import { createTestDatabase, freshDatabaseUrl, type TestDatabase } from '../../helpers/db.js';
import { testRedisPrefix } from '../../helpers/redis.js';
import { feedCheckIn } from '../../unit/records/fixtures.js';

const base = (() => {
  const parsed = parseFeedCheckIn(feedCheckIn());
  if (!parsed.ok) throw new Error(parsed.rejection.reason);
  return parsed.record;
})();

function checkIn(id: string, createdAt: string, endedMinutes: number | null = 30): CheckIn {
  const created = new Date(createdAt);
  return {
    ...base,
    id,
    createdAtMs: created.getTime(),
    endedAtMs: endedMinutes === null ? null : created.getTime() + endedMinutes * 60_000,
  };
}

const ID = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

async function partitionOf(db: Kysely<DB>, id: string): Promise<string[]> {
  const { rows } = await sql<{ part: string }>`
    select tableoid::regclass::text as part from rewards.check_ins where id = ${id}`.execute(db);
  return rows.map((row) => row.part);
}

describe('migration 0008 converts an existing check_ins in place', () => {
  const fresh = freshDatabaseUrl('convert');
  let db: Kysely<DB>;
  let other: Kysely<DB>;

  beforeAll(async () => {
    await ensureDatabase(fresh.url);
    db = createDatabase({ url: fresh.url, maxConnections: 2 });
    other = createDatabase({ url: fresh.url, maxConnections: 2 });
    // An install as 0.1 left it: every migration up to 0007 applied, rows in two months.
    const before = Object.keys(migrations)
      .sort()
      .filter((name) => name < '20261126');
    await db.transaction().execute(async (trx) => {
      await sql`create schema rewards_meta`.execute(trx);
      await sql`create table rewards_meta.kysely_migration (name varchar(255) primary key, timestamp varchar(255) not null)`.execute(
        trx,
      );
      for (const name of before) {
        await migrations[name]!.up(trx);
        await sql`insert into rewards_meta.kysely_migration values (${name}, ${new Date().toISOString()})`.execute(
          trx,
        );
      }
    });
    await sql`
      insert into rewards.check_ins (id, location_id, restaurant_id, svc_pay_enabled, created_at, ended_at, first_seen_at, last_seen_at, deleted_at)
      values
        (${ID(1)}, ${base.locationId}, ${base.restaurantId}, true, '2026-09-30T23:30:00Z', '2026-10-01T00:10:00Z', '2026-10-01T01:00:00Z', '2026-10-02T00:00:00Z', null),
        (${ID(2)}, ${base.locationId}, ${base.restaurantId}, false, '2026-10-05T12:00:00Z', null, '2026-10-05T13:00:00Z', '2026-10-06T00:00:00Z', null),
        (${ID(3)}, ${base.locationId}, ${base.restaurantId}, true, '2026-10-05T13:00:00Z', '2026-10-05T14:00:00Z', '2026-10-05T15:00:00Z', '2026-10-06T00:00:00Z', '2026-10-07T00:00:00Z')
    `.execute(db);
  });
  afterAll(async () => {
    await db?.destroy();
    await other?.destroy();
    await fresh.drop();
  });

  it('two concurrent migrators: one converts, the other then finds nothing to do; no row lost or changed', async () => {
    const { rows: before } = await sql`select * from rewards.check_ins order by id`.execute(db);
    const results = await Promise.all([migrateToLatest(db), migrateToLatest(other)]);
    const applied = results.map((result) => result.applied).sort((a, b) => b.length - a.length);
    // 0008 and 0009 convert; the migrations after them apply in the same run.
    const pending = Object.keys(migrations)
      .sort()
      .filter((name) => name >= '20261126');
    expect(pending.slice(0, 2)).toEqual([
      '20261126_0008_checkins_partitioned',
      '20261126_0009_checkins_daily_rollup',
    ]);
    expect(applied).toEqual([pending, []]);

    const { rows: kind } = await sql<{ relkind: string }>`
      select relkind from pg_class where oid = 'rewards.check_ins'::regclass`.execute(db);
    expect(kind[0]?.relkind).toBe('p');
    const { rows: after } = await sql<
      Record<string, unknown>
    >`select * from rewards.check_ins order by id`.execute(db);
    // Later migrations may add columns (0011: extra, null); every column the rows had is unchanged.
    expect(after.map((row) => Object.fromEntries(Object.keys(before[0]!).map((k) => [k, row[k]])))).toEqual(
      before,
    );
    expect(await partitionOf(db, ID(1))).toEqual(['rewards.check_ins_p202609']);
    expect(await partitionOf(db, ID(2))).toEqual(['rewards.check_ins_p202610']);
    // The rollup starts from the rows: live rows only, the median of ended visits.
    expect(await compareRollupWithRows(db, '2026-09-01', '2026-11-01')).toEqual([]);
    const daily = await db.selectFrom('rewards.check_ins_daily').selectAll().orderBy('day').execute();
    expect(
      daily.map((d) => [
        d.day.toISOString().slice(0, 10),
        d.check_ins,
        d.svc_pay_check_ins,
        d.median_visit_minutes,
      ]),
    ).toEqual([
      ['2026-09-30', 1, 1, 40],
      ['2026-10-05', 1, 0, null],
    ]);
  });

  it('run again on a partitioned table, the migration changes nothing', async () => {
    await db.transaction().execute((trx) => migrations['20261126_0008_checkins_partitioned']!.up(trx));
    const { rows } = await sql<{ n: string }>`select count(*) as n from rewards.check_ins`.execute(db);
    expect(rows[0]?.n).toBe('3');
  });
});

describe('check_ins partitioned by month', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase('partitions');
  });
  afterAll(async () => t.drop());

  it('an id that comes back with another created_at is moved, never stored twice; a staler read moves nothing', async () => {
    await sql`select rewards.create_check_ins_month('2026-10-01'), rewards.create_check_ins_month('2026-11-01')`.execute(
      t.db,
    );
    await upsertCheckInPage(
      t.db,
      [checkIn(ID(10), '2026-10-31T23:50:00Z', null)],
      new Date('2026-11-01T00:00:00Z'),
    );
    await upsertCheckInPage(
      t.db,
      [checkIn(ID(10), '2026-11-01T00:05:00Z', 45)],
      new Date('2026-11-01T01:00:00Z'),
    );
    const rows = await t.db.selectFrom('rewards.check_ins').selectAll().where('id', '=', ID(10)).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      created_at: new Date('2026-11-01T00:05:00Z'),
      first_seen_at: new Date('2026-11-01T00:00:00Z'),
      last_seen_at: new Date('2026-11-01T01:00:00Z'),
    });
    expect(await partitionOf(t.db, ID(10))).toEqual(['rewards.check_ins_p202611']);
    // A read older than the one that moved it changes nothing.
    await upsertCheckInPage(
      t.db,
      [checkIn(ID(10), '2026-10-31T23:50:00Z', null)],
      new Date('2026-11-01T00:30:00Z'),
    );
    expect(await partitionOf(t.db, ID(10))).toEqual(['rewards.check_ins_p202611']);
    expect(await compareRollupWithRows(t.db, '2026-10-01', '2026-12-01')).toEqual([]);
    const daily = await t.db.selectFrom('rewards.check_ins_daily').select(['day', 'check_ins']).execute();
    expect(daily).toEqual([{ day: new Date('2026-11-01T00:00:00Z'), check_ins: 1 }]);
  });

  it('a row of a month nobody created lands in the default partition, and moves out when the month is created', async () => {
    await upsertCheckInPage(
      t.db,
      [checkIn(ID(20), '2024-05-01T18:00:00Z')],
      new Date('2024-05-02T00:00:00Z'),
    );
    expect(await partitionOf(t.db, ID(20))).toEqual(['rewards.check_ins_default']);
    await sql`select rewards.create_check_ins_month('2024-05-17')`.execute(t.db);
    expect(await partitionOf(t.db, ID(20))).toEqual(['rewards.check_ins_p202405']);
    const { rows } = await sql<{ n: string }>`select count(*) as n from rewards.check_ins_default`.execute(
      t.db,
    );
    expect(rows[0]?.n).toBe('0');
    expect(await compareRollupWithRows(t.db, '2024-05-01', '2024-06-01')).toEqual([]);
    // Creating it again is a no-op.
    const { rows: again } = await sql<{
      created: boolean;
    }>`select rewards.create_check_ins_month('2024-05-01') as created`.execute(t.db);
    expect(again[0]?.created).toBe(false);
  });

  it('the planner creates the months a backfill needs, and the one after, before any page', async () => {
    const config = loadConfig({
      SVC_API_BASE_URL: 'http://127.0.0.1:9/v1',
      REDIS_PREFIX: testRedisPrefix('partitions'),
    });
    const logger = createLogger({ level: 'silent' });
    const deps = {
      db: t.db,
      clock: fixedClock(new Date('2026-11-26T12:00:00Z')),
      config,
      logger,
      signal: new AbortController().signal,
    };
    const result = await planCheckinWindows(deps, {
      from: new Date('2025-01-10T00:00:00Z'),
      to: new Date('2025-03-05T00:00:00Z'),
    });
    expect(result.planned).toBeGreaterThan(0);
    const months = (await listCheckInPartitions(t.db)).map((p) => p.name);
    expect(months).toEqual(
      expect.arrayContaining([
        'check_ins_p202501',
        'check_ins_p202502',
        'check_ins_p202503',
        'check_ins_p202504',
      ]),
    );
  });
});
