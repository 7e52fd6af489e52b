import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSpendLedger } from '../../../src/api/spend-ledger.js';
import { fixedClock } from '../../../src/clock.js';
import { loadConfig } from '../../../src/config/config.js';
import { renderStatusPage } from '../../../src/http/status-page.js';
import { collectStatus } from '../../../src/status/collect-status.js';
import { renderStatusText } from '../../../src/status/render-text.js';
import type { StatusReport } from '../../../src/status/status-report.js';
import { thresholdsFor } from '../../../src/status/verdict.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { createTestRedis, deleteRedisPrefix, testRedisPrefix } from '../../helpers/redis.js';

// `status` and the status page show the one budget (docs/rate-limit.md): per stream its share, the
// requests the spend ledger counted in the last hour (every process), and its allowance.

const NOW = new Date('2026-11-26T12:00:00Z');
const MIN = 60_000;

describe('the budget in status', () => {
  let database: TestDatabase;
  let redis: Redis;
  let report: StatusReport;
  const prefix = testRedisPrefix('status-budget');
  // 10 rps: 36,000 requests an hour; intents keep 50 %, members 20 %.
  const config = loadConfig({ REDIS_PREFIX: prefix, SVC_RATE_LIMIT_RPS: '10' });

  beforeAll(async () => {
    database = await createTestDatabase('status-budget');
    redis = createTestRedis();
    // Three connected members, none read yet: 18 member records due.
    await database.db
      .insertInto('rewards.member_connections')
      .values(
        Array.from({ length: 3 }, () => ({
          member_id: randomUUID(),
          status: 'active' as const,
          connected_at: new Date(NOW.getTime() - 60 * MIN),
        })),
      )
      .execute();
    let now = NOW.getTime() - 30 * MIN;
    const ledger = createSpendLedger({ redis, prefix, nowMs: () => now });
    await ledger.record('checkins', 600);
    await ledger.record('payment_intents', 18_000);
    // Two hours ago: outside the last hour.
    now = NOW.getTime() - 120 * MIN;
    await ledger.record('members', 5_000);
    report = await collectStatus({ db: database.db, redis, config, clock: fixedClock(NOW) });
  });
  afterAll(async () => {
    await deleteRedisPrefix(redis, prefix);
    await redis.quit();
    await database.drop();
  });

  it("shows each stream's share, its requests in the last hour and its allowance; members want what is due", () => {
    expect(report.budget.available).toBe(true);
    expect(report.budget.limitPerHour).toBe(36_000);
    const row = (stream: string) => report.budget.streams.find((s) => s.stream === stream);
    expect(row('checkins')).toMatchObject({ share: 0, floorPerHour: 0, requestsLastHour: 600 });
    expect(row('payment_intents')).toMatchObject({
      share: 0.5,
      floorPerHour: 18_000,
      requestsLastHour: 18_000,
      demandPerHour: 18_000,
    });
    expect(row('members')).toMatchObject({
      share: 0.2,
      floorPerHour: 7_200,
      requestsLastHour: 0,
      demandPerHour: 18,
    });
    // Nobody else wants the 17,382 left: it goes to the streams with work, by their demand.
    expect(row('checkins')!.allowancePerHour).toBe(600 + 560 + 1);
    expect(row('payment_intents')!.allowancePerHour).toBe(18_000 + 16_804 + 1);
    expect(row('members')!.allowancePerHour).toBe(18 + 16);
    const total = report.budget.streams.reduce((sum, s) => sum + s.allowancePerHour, 0);
    expect(total).toBe(36_000);
  });

  it('the terminal view and the status page show the table', () => {
    const text = renderStatusText(report);
    expect(text).toContain('BUDGET');
    expect(text).toContain('limit 36,000 requests/h; 18,600 spent in the last hour');
    expect(text).toMatch(/^ {2}payment_intents\s+50 %\s+18,000\s+18,000\s+18,000\s+34,805$/m);
    expect(text).toMatch(/^ {2}members\s+20 %\s+7,200\s+0\s+18\s+34$/m);
    for (const line of text.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(100);
    const page = renderStatusPage(report, thresholdsFor(config));
    expect(page).toContain('<h2>Budget');
    expect(page).toMatch(
      /<td data-label="stream">payment_intents<\/td><td data-label="share" class="num">50 %<\/td><td data-label="floor\/h" class="num">18,000<\/td>/,
    );
  });

  it('says the budget is unknown, not zero, without Redis', async () => {
    const withoutRedis = await collectStatus({ db: database.db, config, clock: fixedClock(NOW) });
    expect(withoutRedis.budget).toEqual({
      available: false,
      reason: 'no Redis connection given',
      limitPerHour: 36_000,
      streams: [],
    });
    expect(renderStatusText(withoutRedis)).toMatch(/^BUDGET\n {2}skipped: no Redis connection given$/m);
  });
});
