import { Kysely, PostgresDialect, sql, type CompiledQuery } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fillSyntheticCheckIns } from '../../../bench/lib/synthetic-history.js';
import { fixedClock } from '../../../src/clock.js';
import { loadConfig } from '../../../src/config/config.js';
import { createLogger } from '../../../src/log.js';
import { collectGaugeFigures, collectStatus } from '../../../src/status/collect-status.js';
import { planCheckinWindows } from '../../../src/streams/checkins/plan.js';
import { countWindowRows, unseenWindowRows, windowWithCounts } from '../../../src/warehouse/check-ins.js';
import { compareRollupWithRows } from '../../../src/warehouse/check-ins-daily.js';
import type { DB } from '../../../src/warehouse/schema.js';
import { insertPlannedWindows } from '../../../src/warehouse/sync-windows.js';
import { windowsInRange } from '../../../src/warehouse/sync-window-reads.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { testRedisPrefix } from '../../helpers/redis.js';

// Every query behind status, the status page, /metrics, verify, the look-back and window planning
// runs against a warehouse of a million check-ins; each one is then EXPLAINed as it was sent
// (parameters included) and none may read check_ins, or any of its partitions, by a sequential
// scan. The queries are captured as the code runs them, not listed by hand, so a new query that
// scans is caught. (doctor reads no table of the warehouse but the migrations'.)

const ROWS = 1_000_000;
const DAY_MS = 86_400_000;
const NOW = new Date('2026-11-26T12:00:00Z');
// History in months that have no partition yet (bulk-loaded, as the scale bench does).
const HISTORY_END = new Date('2026-10-01T00:00:00Z');
const CHECK_INS_TABLE = /^check_ins(_p\d{6}|_default)?$/;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

function seqScansOfCheckIns(node: PlanNode): string[] {
  const here =
    node['Node Type'] === 'Seq Scan' && CHECK_INS_TABLE.test(node['Relation Name'] ?? '')
      ? [node['Relation Name']!]
      : [];
  return [...here, ...(node.Plans ?? []).flatMap(seqScansOfCheckIns)];
}

describe('operator queries stay on indexes at a million check-ins', () => {
  let t: TestDatabase;
  let captured: CompiledQuery[];
  let db: Kysely<DB>;
  let pool: pg.Pool;

  beforeAll(async () => {
    t = await createTestDatabase('explain');
    await fillSyntheticCheckIns(t.db, { rows: ROWS, endBefore: HISTORY_END, days: 90 });
    // Windows over the history (daily) and the last two days (hourly), complete, as after a sync.
    const windows = [];
    for (let start = HISTORY_END.getTime() - 90 * DAY_MS; start < HISTORY_END.getTime(); start += DAY_MS)
      windows.push({ start, end: start + DAY_MS });
    for (let start = HISTORY_END.getTime(); start < NOW.getTime() - 3_600_000; start += 3_600_000)
      windows.push({ start, end: start + 3_600_000 });
    await insertPlannedWindows(t.db, windows);
    await sql`update rewards.sync_windows set status = 'complete', completed_at = ${NOW}`.execute(t.db);
    await sql`analyze`.execute(t.db);
    captured = [];
    pool = new pg.Pool({ connectionString: t.url, max: 4 });
    db = new Kysely<DB>({
      dialect: new PostgresDialect({ pool }),
      log: (event) => {
        if (event.level === 'query') captured.push(event.query);
      },
    });
  }, 600_000);

  afterAll(async () => {
    await db?.destroy();
    await t?.drop();
  });

  it('none of them reads check_ins by a sequential scan', async () => {
    const config = loadConfig({
      DATABASE_URL: t.url,
      REDIS_PREFIX: testRedisPrefix('explain'),
      SVC_API_BASE_URL: 'http://127.0.0.1:9/v1',
      CHECKINS_RETENTION: '400d',
    });
    const clock = fixedClock(NOW);
    // status and the status page (one report), /metrics (the gauge figures).
    await collectStatus({ db, config, clock });
    await collectGaugeFigures({ db, config, clock });
    // Window planning (retention, month partitions, gaps) and the look-back's window counts.
    const logger = createLogger({ level: 'silent' });
    await planCheckinWindows({ db, clock, config, logger, signal: new AbortController().signal });
    const day = {
      start: new Date(HISTORY_END.getTime() - 10 * DAY_MS),
      end: new Date(HISTORY_END.getTime() - 9 * DAY_MS),
    };
    await countWindowRows(db, day.start, day.end, null);
    await windowWithCounts(db, day, NOW);
    await unseenWindowRows(db, day, NOW);
    // verify: its windows, and check_ins_daily against the rows of a verified day.
    await windowsInRange(db, { from: day.start });
    const iso = (d: Date) => d.toISOString().slice(0, 10);
    await compareRollupWithRows(db, iso(day.start), iso(day.end));
    // An analyst's 30-day daily query.
    await sql`select day, sum(check_ins) from rewards.check_ins_daily
              where day >= ${iso(NOW)}::date - 30 group by day`.execute(db);

    const explained: { sql: string; scans: string[] }[] = [];
    for (const query of captured) {
      if (!/^\s*(select|with|update|delete|insert)\b/i.test(query.sql)) continue;
      const { rows } = await pool.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `explain (format json) ${query.sql}`,
        [...query.parameters],
      );
      explained.push({ sql: query.sql, scans: seqScansOfCheckIns(rows[0]!['QUERY PLAN'][0].Plan) });
    }
    // The capture worked: the window counts, the unseen count and the rollup check read check_ins.
    expect(
      explained.filter((q) => /"?rewards"?\."?check_ins"?(?![_a-z])/.test(q.sql)).length,
    ).toBeGreaterThanOrEqual(4);
    expect(explained.filter((q) => q.scans.length > 0)).toEqual([]);
  }, 120_000);
});
