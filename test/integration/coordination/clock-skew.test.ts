import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe as vitestDescribe, expect, it } from 'vitest';
import { verifyRewardsSignature } from '../../../src/alerts/verify-signature.js';
import { startSimulator, type RequestLogEntry, type RunningSimulator } from '../../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { fakeClockEnv } from '../../helpers/faketime.js';
import { startPgBouncer, type RunningPgBouncer } from '../../helpers/pgbouncer.js';
import { missingTools } from '../../helpers/optional-tools.js';
import { createProcessPool } from '../../helpers/processes.js';
import { createTestRedis, deleteRedisPrefix, testRedisPrefix } from '../../helpers/redis.js';
import { WEBHOOK_SECRET } from '../intents/harness.js';

/** How long the receiver takes to answer: a delivery stays in flight that long (as in the reproduction). */
const RECEIVER_DELAY_MS = 1_500;
import { cliEnv, HOUR, pollUntil } from '../worker/harness.js';

// The suite is skipped (and named in the run's summary) where Debian's pgbouncer or faketime is missing;
// under CI=true that fails instead (test/helpers/optional-tools.ts).
const describe = vitestDescribe.skipIf(missingTools('pgbouncer', 'faketime'));

const RPS = 10;
const INTENTS = 6;
const SKEW_MS = 5 * 60_000;
const hour = Math.floor(Date.now() / HOUR) * HOUR;
const anchor = new Date(hour - 10 * 60_000);

interface SlowReceiver {
  url: string;
  received: Array<{ headers: IncomingHttpHeaders; rawBody: string; receivedAt: number }>;
  close(): Promise<void>;
}

/** A webhook receiver that answers 200 only after `delayMs`: each delivery stays in flight that long. */
async function startSlowReceiver(delayMs: number): Promise<SlowReceiver> {
  const received: SlowReceiver['received'] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        headers: request.headers,
        rawBody: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      });
      setTimeout(() => response.writeHead(200).end('{"ok":true}'), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/alerts`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The most requests the simulator logged in any span of `spanMs` (1 s by default). */
function busiestSecond(entries: readonly RequestLogEntry[], spanMs = 1_000): number {
  const times = entries.map((entry) => Date.parse(entry.at)).sort((a, b) => a - b);
  let most = 0;
  for (let first = 0, last = 0; last < times.length; last++) {
    while (times[last]! - times[first]! >= spanMs) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

// Issue 27, item 3. Two workers, one with its clock 5 minutes ahead and one 5 minutes behind
// (libfaketime preloaded into each worker process: their Date.now() is really off), both behind
// PgBouncer in transaction mode, share one Redis and one Postgres. Leases, claims and due times
// are Postgres's now(); the rate limit's slots are Redis's TIME.
describe('two workers, clocks 5 minutes ahead and 5 minutes behind, behind PgBouncer', () => {
  let sim: RunningSimulator;
  let t: TestDatabase;
  let bouncer: RunningPgBouncer;
  let receiver: SlowReceiver;
  const prefix = testRedisPrefix('clock-skew');
  const pool = createProcessPool();

  beforeAll(async () => {
    sim = await startSimulator({ seed: 2705, checkIns: 12_000, anchor, days: 1 });
    t = await createTestDatabase('clock_skew');
    bouncer = await startPgBouncer({ poolMode: 'transaction', poolSize: 4 });
    receiver = await startSlowReceiver(RECEIVER_DELAY_MS);
  });

  afterAll(async () => {
    await pool.cleanup();
    const redis = createTestRedis();
    await deleteRedisPrefix(redis, prefix);
    await redis.quit();
    await receiver?.close();
    await bouncer?.stop();
    await t?.drop();
    await sim?.close();
  });

  it(`every alert is POSTed exactly once, signed with a current time, and the shared limit holds (at most ${RPS} + 2 requests in any second)`, async () => {
    const c = sim.credentials;
    const env = cliEnv({
      sim,
      databaseUrl: bouncer.url(t.name),
      redisPrefix: prefix,
      env: {
        SVC_OAUTH_CLIENT_ID: c.clientId,
        SVC_OAUTH_CLIENT_SECRET: c.clientSecret,
        SVC_OAUTH_REFRESH_TOKEN: c.refreshToken,
        TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        ALERT_WEBHOOK_URL: receiver.url,
        ALERT_WEBHOOK_SECRET: WEBHOOK_SECRET,
        SVC_RATE_LIMIT_RPS: String(RPS),
        // Plenty of check-in pages: the limit binds while the intents are paid.
        CHECKINS_START_AT: new Date(hour - 6 * HOUR).toISOString(),
        CHECKINS_HISTORY_WINDOW: '1h',
        SVC_PAGE_SIZE: '25',
        PAYMENT_INTENTS_EVERY: '1s',
        ALERTS_EVERY: '1s',
      },
    });
    sim.control.requests.clear();
    const ahead = pool.spawnCli(['worker'], {
      env: { ...env, ...fakeClockEnv('+5m') },
      label: 'worker-ahead',
    });
    const behind = pool.spawnCli(['worker'], {
      env: { ...env, ...fakeClockEnv('-5m') },
      label: 'worker-behind',
    });
    const [startedAhead, startedBehind] = await Promise.all(
      [ahead, behind].map((worker) => worker.waitForLog('worker started', 60_000)),
    );
    // The clocks are really off: each worker stamps its log lines with its own clock.
    expect(Number(startedAhead!.time) - Date.now()).toBeGreaterThan(SKEW_MS - 30_000);
    expect(Date.now() - Number(startedBehind!.time)).toBeGreaterThan(SKEW_MS - 30_000);

    // Intents, each paid once the pipeline has seen it open (a payment after watching began).
    const paid: string[] = [];
    for (let i = 0; i < INTENTS; i++) {
      const intent = sim.control.intents.create({ description: `skew ${i}` });
      await pollUntil(
        () =>
          t.db
            .selectFrom('rewards.payment_intents')
            .select('id')
            .where('id', '=', intent.id)
            .executeTakeFirst(),
        (row) => row !== undefined,
        60_000,
        200,
      );
      sim.control.intents.pay(intent.id);
      paid.push(intent.id);
    }
    const alerts = await pollUntil(
      () => t.db.selectFrom('rewards.alerts').select(['id', 'delivered_at']).execute(),
      (rows) => rows.length === INTENTS && rows.every((row) => row.delivered_at !== null),
      90_000,
      250,
    );
    // Long enough for a second claim by the worker that thinks a lease ran out (the old bug sent
    // the second POST about a second after the first).
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    await Promise.all([ahead, behind].map((worker) => worker.stop('SIGTERM', 45_000)));
    // Both took part: each ran passes (leases and claims decided between them by Postgres's clock).
    for (const worker of [ahead, behind]) {
      expect(
        // Idle passes log at debug (issue 40): a window paged counts as work taken part in too.
        worker.logLines().filter((line) => line.msg === 'pass finished' || line.msg === 'window paged')
          .length,
        worker.label,
      ).toBeGreaterThan(0);
    }

    const posts = receiver.received.map((request) => request.headers['rewards-event-id']);
    const perAlert = alerts.map((alert) => posts.filter((id) => id === alert.id).length);
    expect(perAlert).toEqual(alerts.map(() => 1));
    expect(posts).toHaveLength(INTENTS);
    // Signed with the pipeline's clock (Postgres's): current, whichever worker sent it.
    for (const request of receiver.received) {
      const verdict = verifyRewardsSignature({
        rawBody: request.rawBody,
        header: request.headers['rewards-signature'],
        secret: WEBHOOK_SECRET,
        now: new Date(request.receivedAt),
        toleranceSeconds: 60,
      });
      expect(verdict).toMatchObject({ ok: true });
    }

    const requests = sim.control.requests.list();
    const busiest = busiestSecond(requests);
    expect(requests.length).toBeGreaterThan(8 * RPS);
    // Starts are spaced one slot apart (at most RPS + 1 in a second); these are arrival times at the
    // simulator, so a stall of the loaded machine can land requests of neighbouring slots in one
    // second (13 seen once in CI with the whole suite running). Over 5 s the limit holds within
    // that jitter; the clock-skew bug this guards against sent 23–24 in a second.
    expect(busiest).toBeLessThanOrEqual(RPS + 3);
    expect(busiestSecond(requests, 5_000)).toBeLessThanOrEqual(5 * RPS + 5);
    console.log(
      `[clock-skew] ${INTENTS} alerts, ${posts.length} POSTs (duplicates ${posts.length - new Set(posts).size}); ` +
        `${requests.length} API requests, busiest second ${busiest} (limit ${RPS})`,
    );
  }, 240_000);
});
