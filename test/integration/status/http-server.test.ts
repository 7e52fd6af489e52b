import { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/clock.js';
import type { Kysely, KyselyPlugin } from 'kysely';
import { loadConfig, type Config } from '../../../src/config/config.js';
import { startHttpServer, type HttpServerOptions, type RunningHttpServer } from '../../../src/http/server.js';
import { collectStatus } from '../../../src/status/collect-status.js';
import type { DB } from '../../../src/warehouse/schema.js';
import { createLogger } from '../../../src/log.js';
import { createMetrics } from '../../../src/metrics.js';
import { createDatabase } from '../../../src/warehouse/database.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { createTestRedis, deleteRedisPrefix, testRedisPrefix } from '../../helpers/redis.js';
import { NOW, WEBHOOK_SECRET, seedQueues, seedStatusData, statusTestConfig } from './seed-status.js';

const logger = createLogger({ level: 'silent', pretty: false });
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;

describe('the HTTP server on HTTP_PORT', () => {
  let database: TestDatabase;
  let redis: Redis;
  let config: Config;
  let server: RunningHttpServer;
  const prefix = testRedisPrefix('status-http');
  const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;

  beforeAll(async () => {
    database = await createTestDatabase('status_http');
    redis = createTestRedis();
    config = statusTestConfig(prefix);
    await seedStatusData(database.db);
    await seedQueues(redis, prefix);
    server = await startHttpServer({
      port: 0,
      host: '127.0.0.1',
      db: database.db,
      redis,
      config,
      clock: fixedClock(NOW),
      metrics: createMetrics(),
      logger,
    });
  });

  afterAll(async () => {
    await server.close();
    await deleteRedisPrefix(redis, prefix);
    await redis.quit();
    await database.drop();
  });

  it('/healthz answers ok while the process lives', async () => {
    const response = await fetch(url('/healthz'));
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ok\n');
  });

  it('/readyz is 200 when Postgres answers, Redis PINGs and migrations are current', async () => {
    const response = await fetch(url('/readyz'));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      ready: true,
      checks: { postgres: { ok: true }, redis: { ok: true }, migrations: { ok: true } },
    });
  });

  it('/readyz is 503 naming Postgres when Postgres is unreachable', async () => {
    const deadDb = createDatabase({ url: 'postgres://postgres@127.0.0.1:1/rewards_etl', maxConnections: 1 });
    const other = await startHttpServer({
      port: 0,
      host: '127.0.0.1',
      db: deadDb,
      redis,
      config,
      clock: fixedClock(NOW),
      metrics: createMetrics(),
      logger,
    });
    try {
      const response = await fetch(`http://127.0.0.1:${other.port}/readyz`);
      expect(response.status).toBe(503);
      const body = (await response.json()) as {
        ready: boolean;
        checks: Record<string, { ok: boolean; error?: string }>;
      };
      expect(body.ready).toBe(false);
      expect(body.checks['postgres']?.ok).toBe(false);
      expect(body.checks['postgres']?.error).toBe('postgres unreachable');
      expect(body.checks['redis']).toEqual({ ok: true });
      expect(body.checks['migrations']).toEqual({ ok: false, error: 'not checked: postgres unreachable' });
      // Liveness does not depend on dependencies.
      expect((await fetch(`http://127.0.0.1:${other.port}/healthz`)).status).toBe(200);
    } finally {
      await other.close();
      await deadDb.destroy();
    }
  });

  it('/readyz is 503 naming Redis when Redis does not answer', async () => {
    const deadRedis = new IORedis('redis://127.0.0.1:1', {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      retryStrategy: () => null,
    });
    deadRedis.on('error', () => undefined);
    await deadRedis.connect().catch(() => undefined);
    const other = await startHttpServer({
      port: 0,
      host: '127.0.0.1',
      db: database.db,
      redis: deadRedis,
      config,
      clock: fixedClock(NOW),
      metrics: createMetrics(),
      logger,
    });
    try {
      const response = await fetch(`http://127.0.0.1:${other.port}/readyz`);
      expect(response.status).toBe(503);
      const body = (await response.json()) as { checks: Record<string, { ok: boolean }> };
      expect(body.checks['redis']?.ok).toBe(false);
      expect(body.checks['postgres']?.ok).toBe(true);
    } finally {
      await other.close();
      deadRedis.disconnect();
    }
  });

  it('/metrics serves the rewards_etl_* gauges refreshed from the warehouse and the queues', async () => {
    const response = await fetch(url('/metrics'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    const sample = (series: string) =>
      new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1];
    expect(sample('rewards_etl_watermark_lag_seconds{stream="checkins"}')).toBe('300');
    expect(sample('rewards_etl_windows{state="failed"}')).toBe('2');
    expect(sample('rewards_etl_windows{state="complete"}')).toBe('3');
    expect(sample('rewards_etl_windows{state="pending"}')).toBe('1');
    expect(sample('rewards_etl_queue_jobs{queue="streams",state="waiting"}')).toBe('2');
    expect(sample('rewards_etl_queue_jobs{queue="streams",state="delayed"}')).toBe('1');
    expect(sample('rewards_etl_open_payment_intents')).toBe('2');
    expect(sample('rewards_etl_alerts_undelivered')).toBe('2');
    expect(sample('rewards_etl_alerts_failed')).toBe('1');
    expect(text).toContain('# TYPE rewards_etl_api_requests_total counter');
  });

  it('/status.json is the status report', async () => {
    const response = await fetch(url('/status.json'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = (await response.json()) as {
      generatedAt: string;
      verdict: { ok: boolean; problems: string[] };
      windows: { counts: unknown };
    };
    expect(body.generatedAt).toBe(NOW.toISOString());
    expect(body.verdict.problems[0]).toBe('2 failed windows');
    expect(body.windows.counts).toEqual({ pending: 1, running: 1, complete: 3, failed: 2 });
  });

  it('/ is the status page: escaped, self-contained, auto-refreshing, secret-free', async () => {
    const response = await fetch(url('/'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const page = await response.text();
    expect(page).toMatch(/<meta http-equiv="refresh" content="15" ?\/?>/);
    expect(page).toContain('ATTENTION — 6 problems');
    expect(page).toContain('HTTP 500 &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).not.toContain('<script');
    expect(page).not.toMatch(/(src|href)="https?:/);
    expect(page).not.toContain(WEBHOOK_SECRET);
    expect(page).toMatch(/<svg\s+class="chart wide"/);
  });

  /** Another server on the same data, with some options changed; closed by the caller. */
  const startOther = (options: Partial<HttpServerOptions>) =>
    startHttpServer({
      port: 0,
      host: '127.0.0.1',
      db: database.db,
      redis,
      config,
      clock: fixedClock(NOW),
      metrics: createMetrics(),
      logger,
      ...options,
    });

  it('/readyz never shows internal addresses or connection error texts, only fixed phrases', async () => {
    const deadDb = createDatabase({
      url: 'postgres://postgres@10.255.255.1:1/rewards_etl',
      maxConnections: 1,
    });
    const deadRedis = new IORedis('redis://127.0.0.1:1', {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      retryStrategy: () => null,
    });
    deadRedis.on('error', () => undefined);
    await deadRedis.connect().catch(() => undefined);
    const other = await startOther({ db: deadDb, redis: deadRedis });
    try {
      const text = await (await fetch(`${other.url}readyz`)).text();
      expect(JSON.parse(text)).toEqual({
        ready: false,
        checks: {
          postgres: { ok: false, error: 'postgres unreachable' },
          redis: { ok: false, error: 'redis unreachable' },
          migrations: { ok: false, error: 'not checked: postgres unreachable' },
        },
      });
      expect(text).not.toMatch(/10\.255|127\.0\.0\.1|:1\b|ECONN|timeout|within/i);
    } finally {
      await other.close();
      await deadDb.destroy();
      deadRedis.disconnect();
    }
  });

  it('STATUS_TOKEN: everything but /healthz and /readyz wants the token, as Basic auth password or Bearer', async () => {
    const token = 'status-token-0123456789abcdef';
    const other = await startOther({
      config: { ...config, statusToken: loadConfig({ STATUS_TOKEN: token }).statusToken },
    });
    try {
      const get = (path: string, authorization?: string) =>
        fetch(
          `${other.url}${path.slice(1)}`,
          authorization === undefined ? {} : { headers: { authorization } },
        );
      for (const path of ['/', '/status', '/status.json', '/metrics']) {
        const refused = await get(path);
        expect(refused.status).toBe(401);
        expect(refused.headers.get('www-authenticate')).toBe('Basic realm="rewards-etl"');
        expect(await refused.text()).not.toContain('verdict');
        expect((await get(path, `Bearer ${token}x`)).status).toBe(401);
        expect((await get(path, token)).status).toBe(401);
        expect((await get(path, basic('x', `${token}x`))).status).toBe(401);
        expect((await get(`${path}?token=${token}`)).status).toBe(401);
        expect((await get(path, `Bearer ${token}`)).status).toBe(200);
        expect((await get(path, basic('x', token))).status).toBe(200);
      }
      expect((await get('/healthz')).status).toBe(200);
      expect((await get('/readyz')).status).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('STATUS_TOKEN: neither the token nor the Authorization header reaches a log line', async () => {
    const token = 'status-token-never-logged-0123';
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const deadDb = createDatabase({ url: 'postgres://postgres@127.0.0.1:1/rewards_etl', maxConnections: 1 });
    const other = await startOther({
      db: deadDb, // every route fails, so the server logs what it logs on errors
      config: { ...config, statusToken: loadConfig({ STATUS_TOKEN: token }).statusToken },
      logger: createLogger({ level: 'trace', pretty: false, destination }),
    });
    try {
      for (const authorization of [basic('ops', token), basic('ops', `${token}-wrong`), `Bearer ${token}`]) {
        for (const path of ['', 'status.json', 'metrics', 'readyz'])
          await fetch(`${other.url}${path}`, { headers: { authorization } });
      }
    } finally {
      await other.close();
      await deadDb.destroy();
    }
    expect(lines.length).toBeGreaterThan(1);
    const log = lines.join('');
    for (const secret of [token, basic('ops', token).slice(6), basic('ops', `${token}-wrong`).slice(6)])
      expect(log).not.toContain(secret);
    expect(log.toLowerCase()).not.toContain('authorization');
  });

  it('bound beyond loopback without STATUS_TOKEN, it warns in the log; on loopback or with a token it does not', async () => {
    const startLogged = async (host: string, statusToken: Config['statusToken']) => {
      const lines: string[] = [];
      const destination = new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString('utf8'));
          done();
        },
      });
      const other = await startOther({
        host,
        config: { ...config, statusToken },
        logger: createLogger({ level: 'info', pretty: false, destination }),
      });
      await other.close();
      return lines.filter((line) => line.includes('set STATUS_TOKEN')).length;
    };
    const token = loadConfig({ STATUS_TOKEN: 'status-token-0123456789abcdef' }).statusToken;
    expect(await startLogged('0.0.0.0', undefined)).toBe(1);
    expect(await startLogged('0.0.0.0', token)).toBe(0);
    expect(await startLogged('127.0.0.1', undefined)).toBe(0);
  });

  it('the status report is cached briefly: many viewers at once cost one set of queries', async () => {
    let queries = 0;
    const counting: KyselyPlugin = {
      transformQuery: (args) => {
        queries++;
        return args.node;
      },
      transformResult: (args) => Promise.resolve(args.result),
    };
    const db: Kysely<DB> = database.db.withPlugin(counting);
    await collectStatus({ db, redis, config, clock: fixedClock(NOW) });
    const oneReport = queries;
    expect(oneReport).toBeGreaterThan(3);
    queries = 0;
    const other = await startOther({ db });
    try {
      const responses = await Promise.all(
        Array.from({ length: 8 }, (_, i) => fetch(`${other.url}${i % 2 === 0 ? 'status.json' : ''}`)),
      );
      expect(responses.map((response) => response.status)).toEqual(Array(8).fill(200));
      expect((await fetch(`${other.url}status.json`)).status).toBe(200);
      expect(queries).toBe(oneReport);
    } finally {
      await other.close();
    }
  });

  it('answers 404 on unknown paths and 405 on other methods', async () => {
    expect((await fetch(url('/nope'))).status).toBe(404);
    expect((await fetch(url('/metrics'), { method: 'POST' })).status).toBe(405);
  });
});
