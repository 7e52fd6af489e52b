import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { testRedisPrefix } from '../helpers/redis.js';
import {
  CHAOS_ENCRYPTION_KEY,
  CHAOS_WEBHOOK_SECRET,
  chaosEnv,
  secretsOf,
  sleep,
  startWebhookReceiver,
  waitFor,
  type WebhookReceiver,
} from './lib/chaos-env.js';
import { CHAOS_LOG_DIR, runCli, startCli, stopCli } from './lib/cli-process.js';
import { findSecretsInFiles, logFilesIn } from './lib/log-scan.js';
import { recordChaosResult } from './lib/results.js';

const HOUR = 3_600_000;
/** Simulator seeds the other chaos files use: their API keys and client secrets follow from the seed. */
const OTHER_SEEDS = [9001, 9002, 9003];
/** A signed JWT (our access tokens and the simulator's) anywhere in a log is a leak. */
const JWT = /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/;
/**
 * Passwords inside DATABASE_URL and REDIS_URL. The test Postgres trusts local connections and the
 * test Redis has no password, so both are accepted and ignored: the processes run with them all the
 * same, and they must never reach a log (one has a percent-encoded character, to catch both forms).
 */
const PG_PASSWORD_DECODED = 'chaos-pg-p@ss-4f9c2e';
const PG_PASSWORD = encodeURIComponent(PG_PASSWORD_DECODED);
const REDIS_PASSWORD = 'chaos-redis-pass-7d31b0';
const withPassword = (url: string, password: string) => {
  const parsed = new URL(url);
  parsed.password = password;
  return parsed.toString();
};

// Issue 9, scenario 4: no API key, client secret, refresh/access token, webhook secret or
// connection-string password in any log line of any process of the suite, including error paths
// (5xx, 429, a revoked refresh token, a revoked API key, Postgres and Redis unreachable), at debug level. Runs last (see vitest.chaos.config.ts) to scan every file's logs.
describe('no secret in any log of the chaos suite', () => {
  let sim: RunningSimulator;
  let database: TestDatabase;
  let receiver: WebhookReceiver;
  let env: Record<string, string>;
  const anchor = new Date(Math.floor(Date.now() / HOUR) * HOUR - HOUR);
  const from = new Date(anchor.getTime() - 6 * HOUR);

  beforeAll(async () => {
    sim = await startSimulator({ seed: 9004, checkIns: 2_000, anchor, days: 1 });
    database = await createTestDatabase('chaos_secrets');
    receiver = await startWebhookReceiver();
    env = chaosEnv({
      sim,
      databaseUrl: database.url,
      redisPrefix: testRedisPrefix('chaos-secrets'),
      startAt: from,
      window: '1h',
      webhookUrl: receiver.url,
      webhookSecret: CHAOS_WEBHOOK_SECRET,
      encryptionKey: CHAOS_ENCRYPTION_KEY,
      rps: 20,
      extra: {
        LOG_LEVEL: 'debug',
        DATABASE_URL: withPassword(database.url, PG_PASSWORD),
        REDIS_URL: `redis://:${REDIS_PASSWORD}@127.0.0.1:6379`,
      },
    });
  });

  afterAll(async () => {
    await receiver?.close();
    await sim?.close();
    await database?.drop();
  });

  it('the scan itself finds a planted secret and a planted access token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chaos-scan-'));
    const token = await sim.control.credentials.accessToken();
    writeFileSync(
      join(dir, 'planted.log'),
      `{"msg":"oops","key":"${sim.credentials.apiKey}"}\n{"authorization":"Bearer ${token}"}\n`,
    );
    expect(findSecretsInFiles(logFilesIn(dir), ['absent-value', sim.credentials.apiKey])).toEqual([
      { file: join(dir, 'planted.log'), secretIndex: 1 },
    ]);
    expect(JWT.test(readFileSync(join(dir, 'planted.log'), 'utf8'))).toBe(true);
  });

  it('exercises error paths, then finds no secret and no token in any log', async () => {
    const worker = startCli('secrets-worker', ['worker', '--shutdown-deadline', '5'], env);
    try {
      sim.control.faults.set({ serverErrorRate: 0.2, truncateNext: 3 });
      const intent = sim.control.intents.create({ description: 'chaos secrets' });
      await waitFor(
        async () =>
          (await database.db
            .selectFrom('rewards.payment_intents')
            .select('id')
            .where('id', '=', intent.id)
            .executeTakeFirst()) !== undefined,
        60_000,
        500,
      );
      sim.control.intents.pay(intent.id);
      await waitFor(() => Promise.resolve(receiver.received.length > 0), 60_000, 500);
      sim.control.faults.set({ serverErrorRate: 0, rateLimitRps: 2 });
      await sleep(3_000);
      sim.control.faults.reset();
      // A revoked refresh token, once the access token has expired: the refresh error path.
      sim.control.credentials.revokeRefreshTokensOf(sim.control.members.defaultMemberId);
      sim.control.clock.advance(61 * 60_000);
      await sleep(4_000);
    } finally {
      await stopCli(worker);
    }
    // A revoked API key: the authentication error path of a one-shot command.
    sim.control.credentials.revokeApiKey(sim.credentials.apiKey);
    const refused = await runCli('secrets-verify-revoked-key', ['verify'], env);
    expect(refused.code).not.toBe(0);
    await runCli('secrets-status', ['status'], env);
    // Connection errors: a Redis and a Postgres that refuse, addressed with their passwords.
    await runCli('secrets-status-redis-down', ['status'], {
      ...env,
      REDIS_URL: `redis://:${REDIS_PASSWORD}@127.0.0.1:1`,
    });
    const deadDb = new URL(env['DATABASE_URL']!);
    deadDb.port = '1';
    const noDb = await runCli('secrets-verify-postgres-down', ['verify'], {
      ...env,
      DATABASE_URL: deadDb.toString(),
    });
    expect(noDb.code).not.toBe(0);

    const secrets = [
      ...secretsOf(env),
      CHAOS_WEBHOOK_SECRET,
      CHAOS_ENCRYPTION_KEY,
      sim.credentials.adminToken,
      PG_PASSWORD,
      PG_PASSWORD_DECODED,
      REDIS_PASSWORD,
    ];
    for (const seed of OTHER_SEEDS) {
      const other = await startSimulator({ seed, checkIns: 10, days: 1 });
      secrets.push(other.credentials.apiKey, other.credentials.clientSecret, other.credentials.adminToken);
      await other.close();
    }
    const files = logFilesIn(CHAOS_LOG_DIR);
    const bytes = files.reduce((total, file) => total + statSync(file).size, 0);
    const hits = findSecretsInFiles(files, secrets);
    const jwtFiles = files.filter((file) => JWT.test(readFileSync(file, 'utf8')));
    recordChaosResult('secrets', {
      logFiles: files.length,
      logBytes: bytes,
      secretsChecked: secrets.length,
      hits: hits.length,
      jwtFiles: jwtFiles.length,
    });

    expect(files.length).toBeGreaterThanOrEqual(3);
    expect(statSync(worker.logPath).size).toBeGreaterThan(1_000);
    expect(bytes).toBeGreaterThan(10_000);
    // Which secret (by index) in which file; never the value.
    expect(hits).toEqual([]);
    expect(jwtFiles).toEqual([]);
  });
});
