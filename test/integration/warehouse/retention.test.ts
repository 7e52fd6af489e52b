import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFeedCheckIn, type CheckIn } from '../../../src/records/index.js';
import { fixedClock } from '../../../src/clock.js';
import { loadConfig } from '../../../src/config/config.js';
import { createLogger } from '../../../src/log.js';
import { collectStatus } from '../../../src/status/collect-status.js';
import { renderStatusText } from '../../../src/status/render-text.js';
import { planCheckinWindows } from '../../../src/streams/checkins/plan.js';
import { upsertCheckInPage } from '../../../src/warehouse/check-ins.js';
import { listCheckInPartitions } from '../../../src/warehouse/check-in-partitions.js';
import { applyCheckInsRetention } from '../../../src/warehouse/retention.js';
import { insertPlannedWindows } from '../../../src/warehouse/sync-windows.js';
import { loadCheckinsState, saveCheckinsState } from '../../../src/warehouse/checkins-feed-state.js';
import { windowsInRange } from '../../../src/warehouse/sync-window-reads.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { testRedisPrefix } from '../../helpers/redis.js';
import { feedCheckIn } from '../../unit/records/fixtures.js';

const DAY = 86_400_000;
const NOW = new Date('2025-03-20T00:00:00Z');
const base = (() => {
  const parsed = parseFeedCheckIn(feedCheckIn());
  if (!parsed.ok) throw new Error(parsed.rejection.reason);
  return parsed.record;
})();
const checkIn = (n: number, createdAt: string): CheckIn => ({
  ...base,
  id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  createdAtMs: Date.parse(createdAt),
  endedAtMs: Date.parse(createdAt) + 30 * 60_000,
});

describe('retention drops whole months past CHECKINS_RETENTION; the rollup keeps its days', () => {
  let t: TestDatabase;
  const config = loadConfig({
    SVC_API_BASE_URL: 'http://127.0.0.1:9/v1',
    REDIS_PREFIX: testRedisPrefix('retention'),
    CHECKINS_RETENTION: '40d', // cutoff 2025-02-08: January goes, February stays whole
  });

  beforeAll(async () => {
    t = await createTestDatabase('retention');
    for (const month of ['2025-01-01', '2025-02-01', '2025-03-01'])
      await sql`select rewards.create_check_ins_month(${month}::date)`.execute(t.db);
    await upsertCheckInPage(
      t.db,
      [
        checkIn(1, '2025-01-05T10:00:00Z'),
        checkIn(2, '2025-01-20T10:00:00Z'),
        checkIn(3, '2025-02-02T10:00:00Z'),
        checkIn(4, '2025-03-10T10:00:00Z'),
      ],
      new Date('2025-03-11T00:00:00Z'),
    );
    // Daily windows from January on, complete but for one failed in January.
    const start = Date.parse('2025-01-01T00:00:00Z');
    const windows = Array.from({ length: 78 }, (_, i) => ({
      start: start + i * DAY,
      end: start + (i + 1) * DAY,
    }));
    await insertPlannedWindows(t.db, windows);
    await sql`update rewards.sync_windows set status = case when window_start = '2025-01-03T00:00:00Z' then 'failed' else 'complete' end`.execute(
      t.db,
    );
    await saveCheckinsState(
      t.db,
      { watermark: new Date('2025-01-03T00:00:00Z'), frontier: new Date(windows.at(-1)!.end) },
      NOW,
    );
  });
  afterAll(async () => t.drop());

  it('is off without the setting: nothing is removed', async () => {
    const off = loadConfig({ SVC_API_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(await applyCheckInsRetention(t.db, NOW, off.checkins)).toEqual({
      droppedPartitions: [],
      windowsRemoved: 0,
      rollupRowsRemoved: 0,
    });
  });

  it('drops January, forgets its windows (the failed one too), moves the watermark; check_ins_daily keeps January', async () => {
    const outcome = await applyCheckInsRetention(t.db, NOW, config.checkins);
    expect(outcome.droppedPartitions).toEqual([{ name: 'check_ins_p202501', rows: 2 }]);
    expect((await listCheckInPartitions(t.db)).map((p) => p.name)).not.toContain('check_ins_p202501');
    const { rows } = await sql<{ n: string }>`select count(*) as n from rewards.check_ins`.execute(t.db);
    expect(rows[0]?.n).toBe('2');
    // Windows ending before the cutoff are gone: none failed or pending is left to count.
    expect(outcome.windowsRemoved).toBe(38);
    const left = await windowsInRange(t.db, {});
    expect(left[0]?.window_start).toEqual(new Date('2025-02-08T00:00:00Z'));
    expect(left.filter((w) => w.status === 'failed')).toEqual([]);
    expect((await loadCheckinsState(t.db)).watermark).toEqual(new Date('2025-02-08T00:00:00Z'));
    // Analytics over years survive raw-row retention.
    const daily = await t.db
      .selectFrom('rewards.check_ins_daily')
      .select(['day', 'check_ins'])
      .orderBy('day')
      .execute();
    expect(daily.map((d) => d.day.toISOString().slice(0, 10))).toEqual([
      '2025-01-05',
      '2025-01-20',
      '2025-02-02',
      '2025-03-10',
    ]);
  });

  it('status says what retention removed', async () => {
    const report = await collectStatus({ db: t.db, config, clock: fixedClock(NOW) });
    expect(report.retention).toMatchObject({
      checkInsSeconds: 40 * 86_400,
      rollupSeconds: null,
      removed: [
        { target: 'check_ins', rows: 2, removals: 1, through: '2025-02-01T00:00:00.000Z' },
        { target: 'sync_windows', rows: 38, removals: 1, through: '2025-02-08T00:00:00.000Z' },
      ],
    });
    expect(renderStatusText(report)).toMatch(/check_ins: 2 rows removed in 1 pass, up to 2025-02-01/);
  });

  it('windows older than the cutoff are no longer planned', async () => {
    const logger = createLogger({ level: 'silent' });
    const deps = { db: t.db, clock: fixedClock(NOW), config, logger, signal: new AbortController().signal };
    await planCheckinWindows(deps, {
      from: new Date('2024-12-01T00:00:00Z'),
      to: new Date('2025-01-15T00:00:00Z'),
    });
    const old = await windowsInRange(t.db, { to: new Date('2025-02-01T00:00:00Z') });
    expect(old).toEqual([]);
  });

  it('CHECKINS_ROLLUP_RETENTION deletes check_ins_daily days past it', async () => {
    const both = loadConfig({
      SVC_API_BASE_URL: 'http://127.0.0.1:9/v1',
      CHECKINS_RETENTION: '40d',
      CHECKINS_ROLLUP_RETENTION: '60d', // 2025-01-19
    });
    const outcome = await applyCheckInsRetention(t.db, NOW, both.checkins);
    expect(outcome.rollupRowsRemoved).toBe(1);
    const daily = await t.db.selectFrom('rewards.check_ins_daily').select('day').orderBy('day').execute();
    expect(daily.map((d) => d.day.toISOString().slice(0, 10))).toEqual([
      '2025-01-20',
      '2025-02-02',
      '2025-03-10',
    ]);
  });
});
