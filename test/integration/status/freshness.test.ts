import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/clock.js';
import { loadConfig } from '../../../src/config/config.js';
import { renderStatusText } from '../../../src/status/render-text.js';
import { collectStatus } from '../../../src/status/collect-status.js';
import type { StatusReport } from '../../../src/status/status-report.js';
import { renderStatusPage } from '../../../src/http/status-page.js';
import { thresholdsFor } from '../../../src/status/verdict.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { Writable } from 'node:stream';
import { planCommand } from '../../../src/cli/commands/plan.js';
import { createCliContext } from '../../../src/cli/context.js';
import type { FreshnessPlan } from '../../../src/sync/freshness-plan.js';

// `status` shows what the rate limit buys (docs/freshness.md): requests per stream in the last
// hour, and per kind of record the p50/p95 age since last read and since last changed.

const NOW = new Date('2026-11-26T12:00:00Z');
const MIN = 60_000;
const HOUR = 60 * MIN;
const ago = (ms: number) => new Date(NOW.getTime() - ms);

describe('freshness in status', () => {
  let database: TestDatabase;
  let report: StatusReport;
  const config = loadConfig({ FRESHNESS_CEILINGS: 'member.visits=2h' });
  const active = Array.from({ length: 20 }, () => randomUUID());
  const reauth = randomUUID();

  beforeAll(async () => {
    database = await createTestDatabase('status-freshness');
    const db = database.db;
    await db
      .insertInto('rewards.member_connections')
      .values([
        ...active.map((member_id) => ({
          member_id,
          status: 'active' as const,
          connected_at: ago(48 * HOUR),
        })),
        { member_id: reauth, status: 'needs_reauth' as const, connected_at: ago(48 * HOUR) },
      ])
      .execute();
    // Visits of member i last read i minutes ago, changed 10 i minutes ago; member 19 read 3 h
    // ago (past the 2 h ceiling). The member needing re-authorization is not counted.
    const visits = (memberId: string, readAgo: number, changedAgo: number | null, unchanged: number) => ({
      kind: 'member.visits',
      record_id: memberId,
      last_read_at: ago(readAgo),
      last_changed_at: changedAgo === null ? null : ago(changedAgo),
      interval_seconds: 1800,
      next_due_at: ago(readAgo - 30 * MIN),
      reads: 4,
      unchanged_reads: unchanged,
    });
    await db
      .insertInto('rewards.record_reads')
      .values([
        ...active.slice(0, 19).map((id, i) => visits(id, i * MIN, 10 * i * MIN, 1)),
        visits(active[19]!, 3 * HOUR, null, 4),
        visits(reauth, 10 * HOUR, null, 4),
      ])
      .execute();
    await db
      .insertInto('rewards.sync_runs')
      .values([
        {
          stream: 'members',
          started_at: ago(50 * MIN),
          finished_at: ago(49 * MIN),
          status: 'succeeded',
          requests: 700,
          rows: 10,
        },
        {
          stream: 'members',
          started_at: ago(5 * MIN),
          finished_at: ago(4 * MIN),
          status: 'succeeded',
          requests: 500,
          rows: 10,
        },
        {
          stream: 'members',
          started_at: ago(2 * HOUR),
          finished_at: ago(2 * HOUR),
          status: 'succeeded',
          requests: 9_999,
          rows: 1,
        },
        {
          stream: 'checkins',
          started_at: ago(MIN),
          finished_at: ago(MIN),
          status: 'succeeded',
          requests: 60,
          rows: 1,
        },
      ])
      .execute();
    report = await collectStatus({ db, config, clock: fixedClock(NOW) });
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('counts the requests of the passes started in the last hour, per stream', () => {
    const byStream = new Map(report.freshness.requestsLastHour.map((s) => [s.stream, s.requests]));
    expect(byStream.get('members')).toBe(1_200);
    expect(byStream.get('checkins')).toBe(60);
    expect(byStream.get('restaurants')).toBe(0);
  });

  it('gives p50/p95 ages since read and since changed per kind, active members only', () => {
    expect(report.freshness.kinds).toEqual([
      {
        kind: 'member.visits',
        records: 20,
        ceilingSeconds: 7200,
        // read ages: 0..18 min and 180 min; p50 = 9.5 min, p95 = 18 + 0.05 x 162 min (interpolated)
        sinceReadP50Seconds: 570,
        sinceReadP95Seconds: Math.round((18 + 0.05 * 162) * 60),
        // changed ages: 0, 10, …, 180 min (19 members; one never seen changed)
        sinceChangedP50Seconds: 90 * 60,
        sinceChangedP95Seconds: 171 * 60,
        unchangedShare: (19 * 1 + 4) / (20 * 4),
        pastCeiling: 1,
      },
    ]);
  });

  it('a record unread past its ceiling is a problem in the verdict', () => {
    expect(report.verdict.problems).toContain(
      '1 member.visits record unread past the ceiling: the budget does not keep up (rewards-etl plan)',
    );
  });

  it('the terminal view and the status page show the table', () => {
    const text = renderStatusText(report);
    expect(text).toContain('FRESHNESS');
    expect(text).toContain('requests  1,260/h: checkins 60 · members 1,200');
    expect(text).toMatch(
      /^ {2}member\.visits\s+20\s+9 min\s+26 min\s+1 h 30 min\s+2 h 51 min\s+29 %\s+2 h\s+1$/m,
    );
    const page = renderStatusPage(report, thresholdsFor(config));
    expect(page).toContain('<h2>Freshness');
    expect(page).toContain('member.visits');
    expect(page).toContain('<td data-label="overdue" class="num overdue">1</td>');
  });

  it('`plan` projects requests per stream and record ages from the warehouse counts and the limit', async () => {
    const run = async (args: string[]) => {
      let stdout = '';
      const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
          stdout += chunk.toString('utf8');
          done();
        },
      });
      const env = { DATABASE_URL: database.url, LOG_LEVEL: 'silent', SVC_RATE_LIMIT_RPS: '2' };
      await planCommand({ ...createCliContext(env), stdout: sink, stderr: sink }).parseAsync(args, {
        from: 'user',
      });
      return stdout;
    };
    const plan = JSON.parse(await run(['--json'])) as FreshnessPlan & { counts: { activeMembers: number } };
    expect(plan.counts.activeMembers).toBe(20);
    expect(plan.limitPerHour).toBe(7_200);
    // The visits' learned median (30 min) sets their interval.
    expect(plan.records.find((r) => r.kind === 'member.visits')).toMatchObject({
      records: 20,
      readEverySeconds: 1800,
      setBy: 'learned',
      requestsPerHour: 40,
    });
    const text = await run([]);
    expect(text).toContain('rewards-etl plan: what SVC_RATE_LIMIT_RPS=2 buys (7,200 requests/h)');
    expect(text).toMatch(/^ {2}member\.visits\s+20\s+30 min\s+15 min\s+28 min\s+40\s+learned$/m);
  });
});
