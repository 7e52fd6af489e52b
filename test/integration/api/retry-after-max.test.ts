import { spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkinsWindowJob } from '../../../jobs/checkins-window.js';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import { storeMemberConnection } from '../../../src/api/oauth/member-connection.js';
import { createMemberApis } from '../../../src/api/http-partner-api.js';
import { runStreamPass } from '../../../src/streams/passes.js';
import type { StreamName } from '../../../src/sync/stream-facts.js';
import type { StreamDeps } from '../../../src/streams/stream.js';
import { windowOf, windowsInRange } from '../../../src/warehouse/sync-window-reads.js';
import { createIntentHarness, type IntentHarness } from '../intents/harness.js';
import { testRedisPrefix } from '../../helpers/redis.js';
import { createTokenStore } from '../../../src/warehouse/oauth-tokens.js';

// Issue 26: a Retry-After longer than RETRY_AFTER_MAX stops the pass at the first such answer,
// every stream alike (no unit of work after it waits the pause and asks again), and `run` exits 1
// naming the setting. RETRY_AFTER_MAX=2s is under the request budget (120 s): the case that crawled.

const HOUR = 3_600_000;
const ROOT = new URL('../../../', import.meta.url).pathname;

let h: IntentHarness;
const start = () => new Date(Math.floor(Date.now() / HOUR) * HOUR - 30 * HOUR);

/** A "process" with its own Redis prefix: the pause one test leaves behind is not the next one's. */
const processFor = (label: string, env: Record<string, string> = {}) =>
  h.deps({
    env: {
      REDIS_PREFIX: testRedisPrefix(label),
      RETRY_AFTER_MAX: '2s',
      CHECKINS_START_AT: start().toISOString(),
      CHECKINS_WINDOW: '1h',
      CHECKINS_HISTORY_WINDOW: '1h',
      SVC_PAGE_SIZE: '50',
      MEMBER_SYNC_SHARE: '1',
      ...env,
    },
  });

const tooManyRequests = () => h.sim.control.requests.list().filter((r) => r.status === 429);

/** The simulator's token bucket at this rate answers 429 with Retry-After ≈ 100,000 s. */
const RATE_LIMITED_FOR_A_DAY = { rateLimitRps: 0.00001 };

beforeAll(async () => {
  h = await createIntentHarness('retry_after_max');
  // Data for every stream to have many units of work: windows, restaurants, locations, intents, members.
  const clean = await processFor('clean');
  await h.knowAppWallet();
  for (const stream of ['restaurants', 'checkins', 'payment_intents'] as const)
    expect((await runStreamPass(clean, stream)).status).toBe('succeeded');
  const apis = createMemberApis({
    config: clean.config,
    redis: clean.redis,
    tokenStore: createTokenStore(h.database.db),
    logger: clean.logger,
  });
  try {
    for (const { id } of h.sim.control.members.list()) {
      const refreshToken = h.sim.control.credentials.issueRefreshToken({ memberId: id });
      await storeMemberConnection(createTokenStore(h.database.db), {
        issued: await apis.tokenEndpoint.refresh(refreshToken),
        presentedRefreshToken: refreshToken,
        encryptionKey: clean.config.oauth!.encryptionKey.reveal(),
        now: new Date(),
      });
    }
  } finally {
    await apis.close();
  }
  // Every check-in window due again, so a check-in pass has dozens of units of work.
  await h.database.db.updateTable('rewards.sync_windows').set({ status: 'pending' }).execute();
  h.sim.control.requests.clear();
});
afterEach(() => {
  h.sim.control.faults.reset();
  h.sim.control.requests.clear();
});
afterAll(async () => {
  await h?.close();
});

describe('a Retry-After above RETRY_AFTER_MAX stops the pass at the first such answer', () => {
  it.each([
    // stream, units of work it would otherwise go through one pause each, 429s allowed (in flight at once)
    ['checkins', 2],
    ['challenges', 1],
    ['locations', 1],
    ['payment_intents', 1],
    ['members', 1],
  ] as const)(
    '%s: the pass fails naming RETRY_AFTER_MAX after at most %i answer(s)',
    async (stream, inFlight) => {
      const deps: StreamDeps<PartnerApi> = await processFor(`stop-${stream}`);
      h.sim.control.faults.set(RATE_LIMITED_FOR_A_DAY);
      const error = await runStreamPass(deps, stream as StreamName).then(
        (result) => new Error(`the pass ended ${result.status}`),
        (e: unknown) => e as Error,
      );
      expect(error.message).toMatch(/RETRY_AFTER_MAX/);
      const answered = tooManyRequests();
      expect(answered.length, JSON.stringify(answered.map((r) => r.path))).toBeGreaterThanOrEqual(1);
      expect(answered.length).toBeLessThanOrEqual(inFlight);
      // Nothing else reached the API after the first such answer.
      expect(h.sim.control.requests.list().length).toBe(answered.length);
      const run = await h.database.db
        .selectFrom('rewards.sync_runs')
        .select(['status', 'error'])
        .where('stream', '=', stream)
        .orderBy('started_at', 'desc')
        .executeTakeFirstOrThrow();
      expect(run.status).toBe('failed');
      expect(run.error).toMatch(/RETRY_AFTER_MAX/);
    },
  );

  it('a worker window job meeting one fails naming it; the next window job sends nothing while every process is paused', async () => {
    const deps = await processFor('stop-window-job');
    h.sim.control.faults.set(RATE_LIMITED_FOR_A_DAY);
    const [first, second] = (await windowsInRange(h.database.db, {}, ['pending'])).map(windowOf);
    const context = { deps, queue: () => expect.fail('no queue needed') };
    await expect(checkinsWindowJob.process(context, first!)).rejects.toThrow(/RETRY_AFTER_MAX/);
    expect(tooManyRequests()).toHaveLength(1);
    await expect(checkinsWindowJob.process(context, second!)).rejects.toThrow(/RETRY_AFTER_MAX/);
    expect(h.sim.control.requests.list()).toHaveLength(1);
    // The window met by the answer waits for its retry; the other was handed back untouched.
    const windows = await windowsInRange(h.database.db, {});
    const byStart = new Map(windows.map((w) => [w.window_start.getTime(), w]));
    expect(byStart.get(first!.start)?.status).toBe('failed');
    expect(byStart.get(first!.start)?.last_error).toMatch(/RETRY_AFTER_MAX/);
    expect(['pending', 'failed']).toContain(byStart.get(second!.start)?.status);
  });

  it('`run` exits 1 naming RETRY_AFTER_MAX and runs no further stream', async () => {
    h.sim.control.faults.set(RATE_LIMITED_FOR_A_DAY);
    const env = {
      ...h.env,
      REDIS_PREFIX: testRedisPrefix('stop-cli'),
      RETRY_AFTER_MAX: '2s',
      CHECKINS_START_AT: start().toISOString(),
      CHECKINS_WINDOW: '1h',
      LOG_LEVEL: 'warn',
    };
    const ran = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
      (resolve, reject) => {
        const child = spawn(
          process.execPath,
          ['--import', 'tsx', 'src/cli/main.ts', 'run', 'checkins', 'restaurants'],
          {
            cwd: ROOT,
            env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
          },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      },
    );
    expect(ran.code, ran.stderr).toBe(1);
    expect(ran.stdout).toMatch(/^checkins\s+failed\s+.*RETRY_AFTER_MAX/m);
    expect(ran.stdout).toMatch(/^restaurants\s+not run/m);
    expect(ran.stderr).toMatch(/RETRY_AFTER_MAX/);
    expect(tooManyRequests().length).toBeLessThanOrEqual(2);
  });
});
