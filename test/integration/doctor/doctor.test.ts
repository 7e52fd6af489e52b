import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis as IORedis, type Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpTransport, type HttpTransport } from '../../../src/api/http-transport.js';
import { loadConfig, type Config } from '../../../src/config/config.js';
import type { CheckId, DoctorReport } from '../../../src/doctor/doctor-report.js';
import type { ProbeDeps } from '../../../src/doctor/probes.js';
import { runDoctorChecks } from '../../../src/doctor/run-doctor.js';
import { createLogger } from '../../../src/log.js';
import { createDatabase } from '../../../src/warehouse/database.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { missingTools } from '../../helpers/optional-tools.js';
import { startPgBouncer } from '../../helpers/pgbouncer.js';
import { createTestRedis, testRedisPrefix } from '../../helpers/redis.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
const logger = createLogger({ level: 'silent', pretty: false });

function transportLimits(config: Config) {
  return { userAgent: config.api.userAgent, maxResponseBytes: config.api.maxResponseBytes };
}

function statusOf(report: DoctorReport, check: CheckId) {
  const found = report.checks.find((line) => line.check === check);
  if (found === undefined) throw new Error(`no ${check} line`);
  return found;
}

describe('rewards-etl doctor against the simulator, a real Postgres and Redis', () => {
  let sim: RunningSimulator;
  let database: TestDatabase;
  let redis: Redis;
  let webhook: Server;
  let webhookUrl: string;
  const webhookRequests: string[] = [];
  const webhookAuthorizations: (string | null)[] = [];
  const transports: HttpTransport[] = [];
  const encryptionKey = randomBytes(32).toString('base64');

  beforeAll(async () => {
    sim = await startSimulator({ seed: 7, checkIns: 500, days: 2 });
    database = await createTestDatabase('doctor');
    redis = createTestRedis();
    webhook = createServer((request, response) => {
      webhookRequests.push(request.method ?? '?');
      webhookAuthorizations.push(request.headers.authorization ?? null);
      response.writeHead(request.method === 'POST' ? 200 : 405).end();
    });
    await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
    webhookUrl = `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/hooks/rewards?token=abc`;
  });

  afterAll(async () => {
    await Promise.all(transports.map((transport) => transport.close()));
    await new Promise((resolve) => webhook.close(resolve));
    await redis.quit();
    await database.drop();
    await sim.close();
  });

  function environment(overrides: Record<string, string> = {}): Record<string, string> {
    return {
      DATABASE_URL: database.url,
      REDIS_PREFIX: testRedisPrefix('doctor'),
      SVC_API_BASE_URL: sim.baseUrl,
      SVC_API_KEY: sim.credentials.apiKey,
      SVC_OAUTH_CLIENT_ID: sim.credentials.clientId,
      SVC_OAUTH_CLIENT_SECRET: sim.credentials.clientSecret,
      SVC_OAUTH_REFRESH_TOKEN: sim.credentials.refreshToken,
      TOKEN_ENCRYPTION_KEY: encryptionKey,
      ALERT_WEBHOOK_URL: webhookUrl,
      ALERT_WEBHOOK_SECRET: 'whsec_doctor_test',
      ...overrides,
    };
  }

  function doctor(overrides: Record<string, string> = {}, seams: Partial<ProbeDeps> = {}) {
    const config = loadConfig(environment(overrides));
    const transport = createHttpTransport({ ...transportLimits(config), timeoutMs: 5_000 });
    transports.push(transport);
    return runDoctorChecks({ config, db: database.db, redis, transport, logger, ...seams });
  }

  /** The local Redis as a primary with a replica and AOF would answer (it has neither). */
  const replicatedInfo = async () =>
    (await redis.info())
      .replace(/^connected_slaves:.*$/m, 'connected_slaves:1')
      .replace(/^aof_enabled:.*$/m, 'aof_enabled:1');

  it('all good: every check passes, exit 0, and the webhook saw only an unsigned HEAD', async () => {
    const report = await doctor({}, { redisInfo: replicatedInfo });
    expect(report.checks.filter((line) => line.status !== 'ok')).toEqual([]);
    expect(report.exitCode).toBe(0);
    expect(report.checks.map((line) => line.check)).toEqual([
      'configuration',
      'postgres',
      'postgres connection',
      'migrations',
      'redis',
      'redis eviction',
      'redis failover',
      'api',
      'scope read:checkins',
      'scope read:restaurant_challenges',
      'scope read:balance',
      'oauth',
      'webhook',
      'clock',
    ]);
    expect(statusOf(report, 'postgres connection').detail).toMatch(/^direct/);
    expect(statusOf(report, 'clock').detail).toMatch(/Postgres \(the pipeline's clock\).*Redis/);
    expect(webhookRequests.every((method) => method === 'HEAD')).toBe(true);
    expect(webhookRequests.length).toBeGreaterThan(0);
    // The webhook URL's query (a token, say) never shows.
    expect(JSON.stringify(report)).not.toContain('token=abc');
  });

  it('a bad API key fails the api check once and skips the scope probes: exit 1', async () => {
    const report = await doctor({ SVC_API_KEY: `sk_test_${'x'.repeat(32)}` });
    expect(statusOf(report, 'api')).toMatchObject({ status: 'fail' });
    expect(statusOf(report, 'api').detail).toContain('invalid_api_key');
    expect(statusOf(report, 'api').fix).toContain('SVC_API_KEY');
    for (const scope of ['read:checkins', 'read:restaurant_challenges', 'read:balance'] as const) {
      expect(statusOf(report, `scope ${scope}`).status).toBe('skip');
    }
    expect(report.exitCode).toBe(1);
    expect(JSON.stringify(report)).not.toContain('x'.repeat(32));
  });

  it('a key minted without read:restaurant_challenges fails that scope only, naming the stream', async () => {
    const key = sim.control.credentials.mintApiKey(['read:checkins', 'read:balance']);
    const report = await doctor({ SVC_API_KEY: key });
    expect(statusOf(report, 'api').status).toBe('ok');
    expect(statusOf(report, 'scope read:checkins').status).toBe('ok');
    expect(statusOf(report, 'scope read:balance').status).toBe('ok');
    expect(statusOf(report, 'scope read:restaurant_challenges')).toMatchObject({
      status: 'fail',
      detail: 'missing: the challenges stream cannot run',
    });
    expect(report.exitCode).toBe(1);
  });

  it('a key with no scope at all fails all three scope checks', async () => {
    const report = await doctor({ SVC_API_KEY: sim.credentials.apiKeyNoScopes });
    expect(statusOf(report, 'api').status).toBe('ok');
    expect(
      report.checks.filter((line) => line.check.startsWith('scope ')).map((line) => line.status),
    ).toEqual(['fail', 'fail', 'fail']);
  });

  it('Redis with maxmemory-policy allkeys-lru (an injected INFO reply) is a warning naming the risk, exit 0', async () => {
    const report = await doctor(
      {},
      {
        redisInfo: async () =>
          (await redis.info()).replace(/^maxmemory_policy:.*$/m, 'maxmemory_policy:allkeys-lru'),
      },
    );
    const eviction = statusOf(report, 'redis eviction');
    expect(eviction.status).toBe('warn');
    expect(eviction.detail).toContain('allkeys-lru');
    expect(eviction.detail).toMatch(/evicts keys.*jobs, locks and schedules/);
    expect(eviction.fix).toContain('noeviction');
    expect(report.exitCode).toBe(0);
  });

  it('the local Redis (standalone, no replica, appendonly no) is named, with a warning saying what a failure costs', async () => {
    const report = await doctor();
    expect(statusOf(report, 'redis')).toMatchObject({ status: 'ok' });
    expect(statusOf(report, 'redis').detail).toMatch(
      /^standalone 127\.0\.0\.1:6379: reachable, primary 127\.0\.0\.1:6379, Redis \d/,
    );
    const failover = statusOf(report, 'redis failover');
    expect(failover.status).toBe('warn');
    expect(failover.detail).toContain('no replica for the primary');
    expect(failover.detail).toContain('no AOF (appendonly no)');
    expect(report.exitCode).toBe(0);
  });

  it("a host clock a minute off is information only: its offsets to Postgres and Redis are shown, the API is judged against Postgres's clock", async () => {
    const report = await doctor({}, { nowMs: () => Date.now() - 60_000 });
    const clock = statusOf(report, 'clock');
    expect(clock.status).toBe('ok');
    expect(clock.detail).toMatch(/this host is (59|60|61)\.\d s behind Postgres \(the pipeline's clock\)/);
    expect(clock.detail).toMatch(/this host is (59|60|61)\.\d s behind Redis/);
    expect(clock.detail).toContain('Postgres is in sync with the API');
  });

  it('through PgBouncer in transaction mode the postgres connection line says so; in session mode it is direct', async (context) => {
    // Skipped (and named in the run's summary) where Debian's pgbouncer is missing; fails under CI=true.
    if (missingTools('pgbouncer')) return context.skip();
    for (const poolMode of ['transaction', 'session'] as const) {
      const bouncer = await startPgBouncer({ poolMode, poolSize: 4 });
      const url = bouncer.url(database.name);
      const pooled = createDatabase({ url, maxConnections: 2 });
      try {
        const config = loadConfig(environment({ DATABASE_URL: url }));
        const transport = createHttpTransport({ ...transportLimits(config), timeoutMs: 5_000 });
        transports.push(transport);
        const report = await runDoctorChecks({ config, db: pooled, redis, transport, logger });
        const line = statusOf(report, 'postgres connection');
        expect(line.status).toBe('ok');
        if (poolMode === 'transaction') expect(line.detail).toMatch(/^through a transaction-mode pooler/);
        else expect(line.detail).toMatch(/^direct/);
        expect(statusOf(report, 'migrations').status).toBe('ok');
      } finally {
        await pooled.destroy();
        await bouncer.stop();
      }
    }
  });

  it('a webhook URL with user:password@ is probed with Basic auth; no doctor line shows the password', async () => {
    const password = 'hook-pass-7f3a9c';
    const url = new URL(webhookUrl);
    url.username = 'rewards';
    url.password = password;
    webhookAuthorizations.length = 0;
    const report = await doctor({ ALERT_WEBHOOK_URL: url.toString() });
    expect(statusOf(report, 'webhook')).toMatchObject({ status: 'ok' });
    expect(JSON.stringify(report)).not.toContain(password);
    expect(webhookAuthorizations).toEqual([`Basic ${Buffer.from(`rewards:${password}`).toString('base64')}`]);
    // And when the probe fails, its error does not show it either.
    const port = await closedPort();
    const unreachable = await doctor({
      ALERT_WEBHOOK_URL: `http://rewards:${password}@127.0.0.1:${port}/hook`,
    });
    expect(statusOf(unreachable, 'webhook')).toMatchObject({ status: 'fail' });
    expect(JSON.stringify(unreachable)).not.toContain(password);
  });

  it('an unreachable webhook fails its check; nothing is POSTed anywhere', async () => {
    const port = await closedPort();
    const report = await doctor({ ALERT_WEBHOOK_URL: `http://127.0.0.1:${port}/hook` });
    expect(statusOf(report, 'webhook')).toMatchObject({ status: 'fail' });
    expect(statusOf(report, 'webhook').detail).toContain('ECONNREFUSED');
    expect(webhookRequests).not.toContain('POST');
  });

  it('Postgres and Redis unreachable: each fails naming the cause, the checks that need them are skipped', async () => {
    const port = await closedPort();
    const config = loadConfig(
      environment({
        DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/nowhere`,
        REDIS_URL: `redis://127.0.0.1:${port}`,
      }),
    );
    const deadDb = createDatabase({ url: config.databaseUrl.reveal(), maxConnections: 1 });
    const deadRedis = new IORedis(config.redisUrl.reveal(), {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      retryStrategy: () => null,
    });
    let connectError: unknown;
    deadRedis.on('error', (error) => (connectError = error));
    await deadRedis.connect().catch(() => undefined);
    const transport = createHttpTransport({ ...transportLimits(config), timeoutMs: 5_000 });
    transports.push(transport);
    try {
      const report = await runDoctorChecks({
        config,
        db: deadDb,
        redis: deadRedis,
        redisConnectError: () => connectError,
        transport,
        logger,
      });
      expect(statusOf(report, 'postgres')).toMatchObject({ status: 'fail' });
      expect(statusOf(report, 'postgres').detail).toContain('ECONNREFUSED');
      expect(statusOf(report, 'redis').detail).toContain('ECONNREFUSED');
      expect(statusOf(report, 'migrations').status).toBe('skip');
      expect(statusOf(report, 'redis eviction').status).toBe('skip');
      expect(statusOf(report, 'redis failover').status).toBe('skip');
      expect(statusOf(report, 'oauth').status).toBe('skip');
      expect(statusOf(report, 'api').status).toBe('ok');
      expect(report.exitCode).toBe(1);
    } finally {
      deadRedis.disconnect();
      await deadDb.destroy();
    }
  });

  it('a revoked refresh token fails the oauth check with the way out', async () => {
    const member = sim.control.members.defaultMemberId;
    const own = await createTestDatabase('doctor_oauth');
    try {
      const token = sim.control.credentials.issueRefreshToken({ memberId: member });
      sim.control.credentials.revokeRefreshToken(token);
      const config = loadConfig(environment({ DATABASE_URL: own.url, SVC_OAUTH_REFRESH_TOKEN: token }));
      const transport = createHttpTransport({ ...transportLimits(config), timeoutMs: 5_000 });
      transports.push(transport);
      const report = await runDoctorChecks({ config, db: own.db, redis, transport, logger });
      expect(statusOf(report, 'oauth')).toMatchObject({ status: 'fail' });
      expect(statusOf(report, 'oauth').fix).toContain('rewards-etl auth');
      expect(report.exitCode).toBe(1);
    } finally {
      await own.drop();
    }
  });

  it('the command: one line per check and exit 1 on a failed check; --json and exit 2 on bad configuration', async () => {
    const failed = await cli(['doctor'], environment({ SVC_API_KEY: sim.credentials.apiKeyNoScopes }));
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^FAIL {2}scope read:checkins +missing: the checkins stream cannot run/m);
    expect(failed.stdout).toMatch(/^ok {4}postgres +reachable, PostgreSQL \d+/m);
    expect(failed.stdout).toMatch(/^verdict: FAILED: scope read:checkins/m);

    const bad = await cli(['doctor', '--json'], environment({ SVC_RATE_LIMIT_RPS: 'fast' }));
    expect(bad.code).toBe(2);
    const report = JSON.parse(bad.stdout) as DoctorReport;
    expect(report).toMatchObject({ ok: false, exitCode: 2 });
    expect(report.checks).toEqual([
      expect.objectContaining({
        check: 'configuration',
        status: 'fail',
        detail: expect.stringContaining('SVC_RATE_LIMIT_RPS'),
      }),
    ]);
  });
});

/** A port nothing listens on (it just did, and was closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', ...env },
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
  });
}
