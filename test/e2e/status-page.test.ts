import { STREAM_NAMES } from '../../src/streams/registry.js';
import { existsSync, mkdirSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/clock.js';
import { startHttpServer, type RunningHttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/log.js';
import { createMetrics } from '../../src/metrics.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createTestRedis, deleteRedisPrefix, testRedisPrefix } from '../helpers/redis.js';
import { NOW, seedQueues, seedStatusData, statusTestConfig } from '../integration/status/seed-status.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const SCREENSHOT = 'test-artifacts/status-page.png';

if (!hasChromium) {
  console.warn(`status page browser test skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);
}

describe.skipIf(!hasChromium)('the status page in a real browser', () => {
  let database: TestDatabase;
  let redis: Redis;
  let server: RunningHttpServer;
  let browser: Browser;
  const prefix = testRedisPrefix('status-e2e');

  beforeAll(async () => {
    database = await createTestDatabase('status_e2e');
    redis = createTestRedis();
    await seedStatusData(database.db);
    await seedQueues(redis, prefix);
    server = await startHttpServer({
      port: 0,
      host: '127.0.0.1',
      db: database.db,
      redis,
      config: statusTestConfig(prefix),
      clock: fixedClock(NOW),
      metrics: createMetrics(),
      logger: createLogger({ level: 'silent', pretty: false }),
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await deleteRedisPrefix(redis, prefix);
    await redis.quit();
    await database?.drop();
  });

  it('shows the verdict, every stream, the hourly chart and the failures, and loads nothing from elsewhere', async () => {
    const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
    const outside: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(`http://127.0.0.1:${server.port}/`)) outside.push(request.url());
    });
    const response = await page.goto(`http://127.0.0.1:${server.port}/`);
    expect(response?.status()).toBe(200);

    await expect.poll(() => page.title()).toBe('ATTENTION · rewards-etl status');
    expect(await page.locator('#verdict').innerText()).toBe('ATTENTION — 6 problems');
    const problems = await page.locator('header .problems li').allInnerTexts();
    expect(problems).toContain('2 failed windows');
    expect(problems).toContain('1 failed alert');

    const streamCells = await page
      .locator('section:has(h2:text-is("Streams")) tbody tr td:first-child')
      .allInnerTexts();
    expect(streamCells.map((text) => text.trim())).toEqual(STREAM_NAMES);

    const chart = page.locator('svg.chart');
    await expect.poll(() => chart.isVisible()).toBe(true);
    // Current hour: checkins, restaurants, balance; 2 h ago: checkins, payment_intents; 3 h ago: restaurants.
    expect(await chart.locator('rect.bar').count()).toBe(6);
    expect(await chart.locator('rect.bar[data-stream="checkins"]').count()).toBe(2);
    const box = await chart.locator('rect.bar[data-stream="restaurants"]').last().boundingBox();
    expect(box?.height ?? 0).toBeGreaterThan(20);

    const body = await page.locator('body').innerText();
    expect(body).toContain('HTTP 500 <script>alert(1)</script>'); // shown as text, not run
    expect(body).toContain('balance endpoint answered 503');
    expect(body).toContain('location_id missing');

    mkdirSync('test-artifacts', { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(outside).toEqual([]);
    await page.close();
  });
});
