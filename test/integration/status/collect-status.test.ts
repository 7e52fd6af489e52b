import { STREAM_NAMES } from '../../../src/sync/stream-facts.js';
import { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/clock.js';
import type { Config } from '../../../src/config/config.js';
import { statusCommand } from '../../../src/cli/commands/status.js';
import { createCliContext } from '../../../src/cli/context.js';
import { collectStatus } from '../../../src/status/collect-status.js';
import { renderStatusText } from '../../../src/status/render-text.js';
import type { StatusReport } from '../../../src/status/status-report.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { TEST_REDIS_URL, createTestRedis, deleteRedisPrefix, testRedisPrefix } from '../../helpers/redis.js';
import {
  NOW,
  REFRESH_TOKEN_SEALED,
  WEBHOOK_SECRET,
  seedQueues,
  seedStatusData,
  statusTestConfig,
} from './seed-status.js';

describe('collectStatus on a seeded warehouse', () => {
  let database: TestDatabase;
  let redis: Redis;
  let config: Config;
  let report: StatusReport;
  const prefix = testRedisPrefix('status');

  beforeAll(async () => {
    database = await createTestDatabase('status');
    redis = createTestRedis();
    config = statusTestConfig(prefix);
    await seedStatusData(database.db);
    await seedQueues(redis, prefix);
    report = await collectStatus({ db: database.db, redis, config, clock: fixedClock(NOW) });
  });

  afterAll(async () => {
    await deleteRedisPrefix(redis, prefix);
    await redis.quit();
    await database.drop();
  });

  it('reports the check-in watermark, its lag and the frontier', () => {
    expect(report.checkins).toEqual({
      watermark: '2026-11-22T12:25:00.000Z',
      lagSeconds: 300,
      frontier: '2026-11-22T12:28:00.000Z',
    });
  });

  it('counts windows by state and lists the failed ones oldest first', () => {
    expect(report.windows.counts).toEqual({ pending: 1, running: 1, complete: 3, failed: 2 });
    expect(report.windows.failed.map((w) => [w.start, w.attempts, w.lastError])).toEqual([
      ['2026-11-22T07:30:00.000Z', 3, 'HTTP 500 <script>alert(1)</script>'],
      ['2026-11-22T08:30:00.000Z', 1, 'socket hang up'],
    ]);
  });

  it('reads queue depths under the configured prefix', () => {
    expect(report.queues.available).toBe(true);
    const streams = report.queues.queues.find((q) => q.queue === 'streams');
    expect(streams?.counts).toEqual({ waiting: 2, active: 0, delayed: 1, failed: 0, completed: 0 });
    expect(report.queues.queues.map((q) => q.queue).sort()).toEqual([
      'checkins-plan',
      'checkins-window',
      'streams',
    ]);
  });

  it('gives the last run of each stream and when it is next due', () => {
    const byStream = Object.fromEntries(report.streams.map((s) => [s.stream, s]));
    expect(Object.keys(byStream)).toEqual(STREAM_NAMES);
    expect(byStream['restaurants']?.lastRun).toMatchObject({
      startedAt: '2026-11-22T12:20:00.000Z',
      status: 'succeeded',
      rows: 120,
    });
    expect(byStream['restaurants']?.nextDueAt).toBe('2026-11-22T13:20:00.000Z'); // RESTAURANTS_EVERY 1h
    expect(byStream['balance']?.lastRun).toMatchObject({
      status: 'failed',
      error: 'balance endpoint answered 503',
    });
    expect(byStream['balance']?.lastSuccessAt).toBe('2026-11-22T12:10:00.000Z');
    expect(byStream['locations']).toMatchObject({ lastRun: null, nextDueAt: null, intervalSeconds: 3_600 });
    expect(report.failedPasses).toEqual([
      {
        stream: 'balance',
        startedAt: '2026-11-22T12:27:00.000Z',
        status: 'failed',
        error: 'balance endpoint answered 503',
      },
    ]);
  });

  it('buckets rows per hour: new check-ins by first sight, other streams by pass', () => {
    const { hours, series } = report.throughput;
    expect(hours).toHaveLength(24);
    expect(hours[23]).toBe('2026-11-22T12:00:00.000Z');
    expect(hours[0]).toBe('2026-11-21T13:00:00.000Z');
    const rows = Object.fromEntries(series.map((s) => [s.stream, s.rows]));
    expect(rows['checkins']?.[23]).toBe(5);
    expect(rows['checkins']?.[21]).toBe(3);
    expect(rows['checkins']?.reduce((a, b) => a + b)).toBe(8);
    expect(rows['restaurants']?.[23]).toBe(120);
    expect(rows['restaurants']?.[20]).toBe(80);
    expect(rows['balance']?.[23]).toBe(4);
    expect(rows['payment_intents']?.[21]).toBe(3);
    expect(rows['alerts']?.every((n) => n === 0)).toBe(true);
  });

  it('reports open intents, alert backlog and rejected records', () => {
    expect(report.intents).toEqual({
      open: 2,
      oldestOpenAt: '2026-11-22T09:30:00.000Z',
      oldestOpenId: '00000000-0000-4000-8000-000000000001',
    });
    expect(report.alerts).toMatchObject({ undelivered: 2, retrying: 1, failed: 1 });
    expect(report.alerts.recentFailures.map((a) => a.attempts)).toEqual([2, 8]);
    expect(report.rejected).toMatchObject({
      total: 3,
      last24h: 2,
      byStream: [
        { stream: 'checkins', count: 2 },
        { stream: 'restaurants', count: 1 },
      ],
    });
    expect(report.rejected.recent.map((r) => r.recordId)).toEqual(['ci-1', 'r-9', 'ci-2']);
  });

  it('shows the OAuth token state and never a secret', () => {
    expect(report.oauth).toMatchObject({
      configured: true,
      hasRefreshToken: true,
      accessTokenExpiresAt: '2026-11-22T13:00:00.000Z',
      needsReauthorization: false,
    });
    const json = JSON.stringify(report);
    expect(json).not.toContain(REFRESH_TOKEN_SEALED);
    expect(json).not.toContain('sealed-access-token');
    expect(json).not.toContain(WEBHOOK_SECRET);
    expect(json).toContain('[redacted]');
  });

  it('sums it up in a verdict naming each problem', () => {
    expect(report.verdict.ok).toBe(false);
    expect(report.verdict.problems).toEqual([
      '2 failed windows',
      '1 failed alert',
      '1 alert retrying delivery',
      'last balance pass failed',
      'payment_intents overdue by 1 h 59 min',
      '2 records rejected in 24 h',
    ]);
  });

  it('renders a terminal view led by the verdict, within 100 columns', () => {
    const text = renderStatusText(report);
    const lines = text.trimEnd().split('\n');
    // The verdict wraps instead of being cut.
    expect(lines.slice(0, 2)).toEqual([
      'ATTENTION: 2 failed windows, 1 failed alert, 1 alert retrying delivery, last balance pass failed,',
      '           payment_intents overdue by 1 h 59 min, 2 records rejected in 24 h',
    ]);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(100);
    expect(text).toContain('watermark  2026-11-22 12:25 UTC  (5 min behind)');
    expect(text).toContain('windows    pending 1   running 1   complete 3   failed 2');
    for (const stream of ['restaurants', 'checkins', 'payment_intents', 'alerts'])
      expect(text).toMatch(new RegExp(`^  ${stream} `, 'm'));
    expect(text).toMatch(/^ {2}streams\s+2\s+0\s+1\s+0\s+0$/m);
    expect(text).toMatch(/^ {2}balance .* failed .*\n {6}↳ balance endpoint answered 503$/m);
    expect(text).toContain('open 2');
    expect(text).not.toContain(WEBHOOK_SECRET);
  });

  it('strips control characters from partner text before printing it to a terminal', () => {
    const hostile = 'bad\u001b[2J\u001b]0;owned\u0007 record\u009b31m\r\nnext\u202eline';
    const tainted = structuredClone(report);
    tainted.streams[0]!.lastRun = { ...tainted.streams[0]!.lastRun!, status: 'failed', error: hostile };
    tainted.rejected.recent = tainted.rejected.recent.map((r) => ({
      ...r,
      reason: hostile,
      recordId: hostile,
    }));
    tainted.oauth = { ...tainted.oauth, lastError: hostile };
    const text = renderStatusText(tainted);
    // eslint-disable-next-line no-control-regex
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(text).toContain('bad[2J]0;owned record31m  nextline');
  });

  it('says queue depths are unknown, not zero, when Redis does not answer', async () => {
    const dead = new IORedis('redis://127.0.0.1:1', {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      retryStrategy: () => null,
    });
    dead.on('error', () => undefined);
    await dead.connect().catch(() => undefined);
    try {
      const offline = await collectStatus({ db: database.db, redis: dead, config, clock: fixedClock(NOW) });
      expect(offline.queues).toMatchObject({ available: false, queues: [] });
      expect(offline.verdict.problems).toContain('Redis unreachable: queue depths unknown');
      expect(renderStatusText(offline)).toContain('skipped: Redis unreachable');
      const absent = await collectStatus({ db: database.db, config, clock: fixedClock(NOW) });
      expect(absent.queues.available).toBe(false);
      expect(absent.windows.counts.failed).toBe(2);
    } finally {
      dead.disconnect();
    }
  });

  it("status cuts error lines at the terminal's width, not at 100 columns", () => {
    const long = `HTTP 500 ${'x'.repeat(150)}`;
    const [first, ...rest] = report.windows.failed;
    const withLongError: StatusReport = {
      ...report,
      windows: { ...report.windows, failed: [{ ...first!, lastError: long }, ...rest] },
    };
    expect(renderStatusText(withLongError, { width: 200 })).toContain(long);
    const narrow = renderStatusText(withLongError);
    expect(narrow).not.toContain(long);
    for (const line of narrow.split('\n')) expect(line.length).toBeLessThanOrEqual(100);
  });

  it('`status --json` prints the report on stdout, and `status` the text view; ATTENTION exits 1', async () => {
    const run = async (args: string[]) => {
      let stdout = '';
      const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
          stdout += chunk.toString('utf8');
          done();
        },
      });
      const env = {
        DATABASE_URL: database.url,
        REDIS_URL: TEST_REDIS_URL,
        REDIS_PREFIX: prefix,
        LOG_LEVEL: 'silent',
      };
      // The seeded warehouse has failed windows: the verdict is ATTENTION, so status exits 1.
      await expect(
        statusCommand({ ...createCliContext(env), stdout: sink, stderr: sink }).parseAsync(args, {
          from: 'user',
        }),
      ).rejects.toMatchObject({ name: 'CliExit', code: 1 });
      return stdout;
    };
    const json = JSON.parse(await run(['--json'])) as StatusReport;
    expect(json.windows.counts).toEqual({ pending: 1, running: 1, complete: 3, failed: 2 });
    expect(json.queues.available).toBe(true);
    expect(json.intents.open).toBe(2);
    const text = await run([]);
    expect(text).toMatch(/^ATTENTION: 2 failed windows, 1 failed alert/);
    expect(text).toContain('STREAMS');
  });
});
