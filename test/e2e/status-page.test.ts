import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/config.js';
import { startHttpServer, type RunningHttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/log.js';
import { createMetrics } from '../../src/metrics.js';
import { STREAM_NAMES } from '../../src/sync/stream-facts.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { missingTools, toolPath } from '../helpers/optional-tools.js';
import { createTestRedis, deleteRedisPrefix, testRedisPrefix } from '../helpers/redis.js';
import {
  NOW,
  seedLongFailures,
  seedQueues,
  seedRecordReads,
  seedStatusData,
  seedStuckWorker,
  statusTestConfig,
} from '../integration/status/seed-status.js';

// The status page as an operator sees it: Chromium (Debian's, through playwright-core), through
// Basic auth as a browser asks for it, on a phone, a tablet and a desktop. Screenshots are kept in
// test-artifacts/status-page/ for a person to look at.

const ARTIFACTS = 'test-artifacts/status-page';
const STATUS_TOKEN = 'status-token-for-the-browser-0123';
/** 360 px: the narrowest phone the page promises; 390: a common one; a tablet; a desktop. */
const WIDTHS = [360, 390, 768, 1400] as const;

/** What the page-side callbacks read of the browser's window (the tests compile without the DOM lib). */
interface BrowserWindow {
  innerWidth: number;
  innerHeight: number;
  document: { documentElement: { scrollWidth: number } };
}

describe.skipIf(missingTools('chromium'))('the status page in a real browser', () => {
  let database: TestDatabase;
  let redis: Redis;
  let server: RunningHttpServer;
  let browser: Browser;
  const prefix = testRedisPrefix('status-e2e');
  const origin = () => `http://127.0.0.1:${server.port}`;

  beforeAll(async () => {
    database = await createTestDatabase('status_e2e');
    redis = createTestRedis();
    await seedStatusData(database.db);
    await seedLongFailures(database.db);
    await seedRecordReads(database.db);
    await seedQueues(redis, prefix);
    await seedStuckWorker(redis, prefix);
    server = await startHttpServer({
      port: 0,
      host: '127.0.0.1',
      db: database.db,
      redis,
      config: { ...statusTestConfig(prefix), statusToken: loadConfig({ STATUS_TOKEN }).statusToken },
      clock: fixedClock(NOW),
      metrics: createMetrics(),
      logger: createLogger({ level: 'silent', pretty: false }),
    });
    browser = await chromium.launch({
      executablePath: toolPath('chromium') ?? 'chromium',
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
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (redis !== undefined) {
      await deleteRedisPrefix(redis, prefix);
      await redis.quit();
    }
    await database?.drop();
  });

  /** A fresh browser context (its own profile) answering the Basic auth challenge with the token. */
  const openPage = async (width: number, height = 900): Promise<Page> => {
    const context = await browser.newContext({
      viewport: { width, height },
      httpCredentials: { username: 'operator', password: STATUS_TOKEN },
    });
    return context.newPage();
  };

  it('a browser is asked for the token (401, WWW-Authenticate: Basic) and shown nothing with a wrong one', async () => {
    const context = await browser.newContext({
      httpCredentials: { username: 'operator', password: `${STATUS_TOKEN}-wrong` },
    });
    const page = await context.newPage();
    const response = await page.goto(`${origin()}/`);
    expect(response?.status()).toBe(401);
    expect(await response?.headerValue('www-authenticate')).toBe('Basic realm="rewards-etl"');
    expect(await page.locator('body').innerText()).not.toContain('ATTENTION');
    await context.close();
  });

  it('shows the verdict, every stream, the hourly chart and the failures, and loads nothing from elsewhere', async () => {
    const page = await openPage(1366);
    const outside: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(`${origin()}/`)) outside.push(request.url());
    });
    const response = await page.goto(`${origin()}/`);
    expect(response?.status()).toBe(200);

    await expect.poll(() => page.title()).toBe('ATTENTION · rewards-etl status');
    expect(await page.locator('#verdict').innerText()).toBe('ATTENTION — 9 problems');
    const problems = await page.locator('header .problems li').allInnerTexts();
    expect(problems).toContain('3 failed windows');
    expect(problems).toContain('1 failed alert');
    expect(problems.some((text) => text.startsWith('worker db-7:4242 stuck'))).toBe(true);

    const streamCells = await page
      .locator('section:has(h2:text-is("Streams")) tbody tr td:first-child')
      .allInnerTexts();
    expect(streamCells.map((text) => text.trim())).toEqual(STREAM_NAMES);

    const chart = page.locator('svg.chart.wide');
    await expect.poll(() => chart.isVisible()).toBe(true);
    // Current hour: checkins, restaurants, balance (the failed locations pass wrote no row); 2 h ago:
    // checkins, payment_intents; 3 h ago: restaurants.
    expect(await chart.locator('rect.bar').count()).toBe(6);
    expect(await chart.locator('rect.bar[data-stream="checkins"]').count()).toBe(2);
    const box = await chart.locator('rect.bar[data-stream="restaurants"]').last().boundingBox();
    expect(box?.height ?? 0).toBeGreaterThan(20);

    const body = await page.locator('body').innerText();
    expect(body).toContain('HTTP 500 <script>alert(1)</script>'); // shown as text, not run
    expect(body).toContain('balance endpoint answered 503');
    expect(body).toContain('location_id missing');

    await page.screenshot({ path: join(ARTIFACTS, 'status-page-1366.png'), fullPage: true });
    expect(outside).toEqual([]);
    await page.context().close();
  });

  for (const width of WIDTHS) {
    it(`at ${width} px: no horizontal scroll, the verdict first on screen, every error inside the viewport`, async () => {
      const page = await openPage(width, width < 500 ? 844 : 1000);
      expect((await page.goto(`${origin()}/`))?.status()).toBe(200);
      await page.screenshot({ path: join(ARTIFACTS, `status-page-${width}.png`), fullPage: true });

      const layout = await page.evaluate(() => {
        const view = globalThis as unknown as BrowserWindow;
        return {
          scrollWidth: view.document.documentElement.scrollWidth,
          innerWidth: view.innerWidth,
          innerHeight: view.innerHeight,
        };
      });
      const sticking = await page.locator('body *').evaluateAll((elements) =>
        elements
          .filter(
            (element) =>
              element.getBoundingClientRect().right >
              (globalThis as unknown as BrowserWindow).innerWidth + 0.5,
          )
          .slice(0, 5)
          .map((element) => `<${element.tagName.toLowerCase()}> ${(element.textContent ?? '').slice(0, 40)}`),
      );
      expect(layout.scrollWidth, `sticking out: ${sticking.join(' | ')}`).toBeLessThanOrEqual(
        layout.innerWidth,
      );

      // The verdict is on the first screen, above everything else the page shows.
      const verdict = await page.locator('#verdict').boundingBox();
      expect(verdict).not.toBeNull();
      expect(verdict!.y + verdict!.height).toBeLessThanOrEqual(layout.innerHeight);
      const firstSection = await page.locator('main section').first().boundingBox();
      expect(verdict!.y).toBeLessThan(firstSection!.y);
      expect(await page.locator('header .problems li').count()).toBe(9);

      // Every error text: shown, whole, and inside the viewport's width (none clipped by its box).
      const errors = await page.locator('.err').evaluateAll((cells) =>
        cells
          .filter((cell) => (cell.textContent ?? '').trim() !== '')
          .map((cell) => {
            const box = cell.getBoundingClientRect();
            return {
              text: (cell.textContent ?? '').trim().slice(0, 40),
              left: box.left,
              right: box.right,
              width: box.width,
              clipped: cell.scrollWidth > cell.clientWidth + 1,
            };
          }),
      );
      expect(errors.length).toBeGreaterThanOrEqual(8);
      for (const error of errors) {
        expect(error, error.text).toMatchObject({ clipped: false });
        expect(error.width, error.text).toBeGreaterThan(0);
        expect(error.left, error.text).toBeGreaterThanOrEqual(0);
        expect(error.right, error.text).toBeLessThanOrEqual(layout.innerWidth);
      }

      // A failed stream's row shows its error, the failed alert its state, the stuck worker its state.
      const body = await page.locator('body').innerText();
      expect(body).toContain('balance endpoint answered 503');
      expect(body).toContain('gave up');
      expect(body).toMatch(/STUCK: streams idle \d+ s with 3 ready; restarting/);

      // One drawing of the hourly chart, the one drawn for this width (its text stays readable).
      expect(await page.locator('svg.chart:visible').count()).toBe(1);
      expect(await page.locator(`svg.chart.${width < 600 ? 'narrow' : 'wide'}`).isVisible()).toBe(true);

      // No card, section or table spills past the viewport.
      const spills = await page.locator('section, .card, .grid2 > div, table').evaluateAll((boxes) =>
        boxes
          .map((box): { left: number; right: number } => {
            const { left, right } = box.getBoundingClientRect();
            return { left, right };
          })
          .filter((rect) => rect.left < 0 || rect.right > (globalThis as unknown as BrowserWindow).innerWidth)
          .map((rect) => `${rect.left}..${rect.right}`),
      );
      expect(spills).toEqual([]);
      await page.context().close();
    });
  }
});
