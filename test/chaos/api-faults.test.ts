import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.js';
import { startSimulator, type FaultSettings, type RunningSimulator } from '../../src/simulator/index.js';
import { runStreamPass, type PassResult } from '../../src/streams/passes.js';
import { createTestDatabase } from '../helpers/db.js';
import { createPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';
import { testRedisPrefix } from '../helpers/redis.js';
import { CHAOS_ENCRYPTION_KEY, secretsOf, sleep } from './lib/chaos-env.js';
import { runCli } from './lib/cli-process.js';
import { recordChaosResult } from './lib/results.js';
import { chaosSizes } from './lib/scale.js';
import { tallyCheckIns, windowStatuses } from './lib/warehouse-checks.js';

const sizes = chaosSizes();
const HOUR = 3_600_000;

// Issue 9, scenario 3: partner-API faults against in-process passes (the same stream functions the
// worker runs). After each fault: the warehouse equals the API, nothing lost, and the retries counted.
describe(`partner-API faults (${sizes.scale})`, () => {
  let sim: RunningSimulator;
  const anchor = new Date(Math.floor(Date.now() / HOUR) * HOUR - HOUR);
  const from = new Date(anchor.getTime() - 24 * HOUR);
  const cleanups: Array<() => Promise<void>> = [];
  const figures: Record<string, unknown> = {};

  beforeAll(async () => {
    sim = await startSimulator({ seed: 9003, checkIns: sizes.faultCheckIns, anchor, days: 1 });
  });

  afterAll(async () => {
    recordChaosResult('api-faults', figures);
    for (const cleanup of cleanups.reverse()) await cleanup();
    await sim?.close();
  });

  /** A fresh database and pipeline; the clock runs `offsetMs` ahead of real time (moved to retry failed windows). */
  async function pipeline(label: string, env: Record<string, string> = {}) {
    const database = await createTestDatabase(`chaos_faults_${label}`);
    let offsetMs = 0;
    const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
    const fullEnv = {
      CHECKINS_START_AT: from.toISOString(),
      CHECKINS_WINDOW: '1h',
      CHECKINS_LOOKBACK: '72h',
      SVC_OAUTH_CLIENT_ID: sim.credentials.clientId,
      SVC_OAUTH_CLIENT_SECRET: sim.credentials.clientSecret,
      SVC_OAUTH_REFRESH_TOKEN: sim.credentials.refreshToken,
      TOKEN_ENCRYPTION_KEY: CHAOS_ENCRYPTION_KEY,
      REDIS_PREFIX: testRedisPrefix(`chaos-faults-${label}`),
      LOG_LEVEL: 'info',
      ...env,
    };
    const harness: PipelineHarness = createPipelineHarness({
      sim,
      db: database.db,
      clock,
      env: fullEnv,
      label,
    });
    cleanups.push(async () => {
      await harness.close();
      await database.drop();
    });
    // The harness's API client has no metrics of its own: its retry log lines are the count.
    const retries = () => retryLines(harness.logs()).total;
    return {
      database,
      harness,
      retries,
      env: fullEnv,
      advance: (ms: number) => {
        offsetMs += ms;
      },
    };
  }

  type Pipeline = Awaited<ReturnType<typeof pipeline>>;

  /** Check-in passes until every window is complete; a failed window is retried after its backoff (clock moved). */
  async function syncCheckIns(p: Pipeline, maxPasses = 6): Promise<PassResult[]> {
    const results: PassResult[] = [];
    for (let i = 0; i < maxPasses; i++) {
      results.push(await runStreamPass(p.harness.deps, 'checkins'));
      const statuses = await windowStatuses(p.database.db);
      if (Object.keys(statuses).every((status) => status === 'complete')) break;
      p.advance(2 * HOUR);
    }
    return results;
  }

  async function expectWarehouseEqualsApi(p: Pipeline): Promise<{ api: number; rows: number }> {
    const statuses = await windowStatuses(p.database.db);
    expect(Object.keys(statuses), JSON.stringify(statuses)).toEqual(['complete']);
    const tally = await tallyCheckIns(p.database.db, from, anchor);
    sim.control.faults.reset();
    const api = await p.harness.deps.api.countCheckIns({ createdAfter: from, createdBefore: anchor });
    expect(tally.rows).toBe(tally.distinct);
    expect(tally.distinct).toBe(api);
    const leaked = secretsOf(p.env).filter((secret) => p.harness.logs().includes(secret));
    expect(leaked).toHaveLength(0);
    return { api, rows: tally.rows };
  }

  function withFaults(patch: Partial<FaultSettings>) {
    sim.control.faults.reset();
    sim.control.requests.clear();
    sim.control.faults.set(patch);
  }

  const statusCount = (test: (status: number) => boolean) =>
    sim.control.requests.list().filter((r) => test(r.status)).length;

  it('10% 5xx with HTML bodies', async () => {
    const p = await pipeline('5xx');
    withFaults({ serverErrorRate: 0.1 });
    await syncCheckIns(p);
    const injected = statusCount((s) => s >= 500);
    const retried = p.retries();
    figures.serverErrors = { injected, retried, ...(await expectWarehouseEqualsApi(p)) };
    expect(injected).toBeGreaterThan(0);
    expect(retried).toBeGreaterThanOrEqual(injected);
  });

  it('429 storms with Retry-After', async () => {
    const p = await pipeline('429', { SVC_RATE_LIMIT_RPS: '1000' });
    withFaults({ rateLimitRps: 4 });
    await syncCheckIns(p);
    const injected = statusCount((s) => s === 429);
    const rateLimited = retryLines(p.harness.logs()).rateLimited;
    figures.rateLimited = {
      injected,
      counted: rateLimited,
      retried: p.retries(),
      ...(await expectWarehouseEqualsApi(p)),
    };
    expect(injected).toBeGreaterThan(0);
    expect(rateLimited).toBe(injected);
  });

  it('truncated bodies', async () => {
    const p = await pipeline('truncated');
    withFaults({ truncateNext: 5 });
    await syncCheckIns(p);
    const retried = p.retries();
    figures.truncated = { injected: 5, retried, ...(await expectWarehouseEqualsApi(p)) };
    expect(retried).toBeGreaterThanOrEqual(5);
  });

  it('latency spikes past the client timeout', async () => {
    const p = await pipeline('latency', { SVC_REQUEST_TIMEOUT: '400ms' });
    withFaults({});
    // Spikes of 1.5 s (past the 400 ms timeout) come and go while the pass runs.
    let spikes = 0;
    let running = true;
    const spiker = (async () => {
      while (running) {
        sim.control.faults.set({ latencyMs: 1_500 });
        spikes++;
        await sleep(700);
        sim.control.faults.set({ latencyMs: 0 });
        await sleep(1_500);
      }
    })();
    try {
      await syncCheckIns(p, 10);
    } finally {
      running = false;
      await spiker;
    }
    const retried = p.retries();
    figures.latency = { spikes, retried, ...(await expectWarehouseEqualsApi(p)) };
    expect(spikes).toBeGreaterThan(0);
    expect(retried).toBeGreaterThan(0);
  });

  it('page shifting mid-window', async () => {
    const p = await pipeline('shift', { SVC_PAGE_SIZE: '50' });
    withFaults({ shiftNextPageBy: 25 });
    const results = await syncCheckIns(p);
    figures.pageShift = { inserted: 25, passes: results.length, ...(await expectWarehouseEqualsApi(p)) };
    expect(sim.control.faults.get().shiftNextPageBy).toBe(0); // the shift did happen
  });

  it('a burst of late arrivals is picked up by the look-back', async () => {
    const p = await pipeline('late', { CHECKINS_LOOKBACK_EVERY: '1s' });
    withFaults({});
    await syncCheckIns(p);
    const before = await tallyCheckIns(p.database.db, from, anchor);
    const burst = sizes.scale === 'full' ? 2_000 : 300;
    sim.control.checkIns.addLate(burst, {
      from: new Date(from.getTime() + 3 * HOUR),
      to: new Date(anchor.getTime() - 3 * HOUR),
    });
    await sleep(1_100);
    await syncCheckIns(p);
    const after = await expectWarehouseEqualsApi(p);
    figures.lateArrivals = { burst, before: before.rows, ...after };
    expect(after.rows - before.rows).toBe(burst);
  });

  it('expired access tokens are refreshed (simulator clock past 60 min)', async () => {
    const p = await pipeline('expired');
    withFaults({});
    const intent = sim.control.intents.create({ description: 'chaos expired token' });
    expect((await runStreamPass(p.harness.deps, 'payment_intents')).status).toBe('succeeded');
    const tokenCallsBefore = tokenRequests(sim);
    sim.control.clock.advance(61 * 60_000);
    sim.control.intents.pay(intent.id);
    const second = await runStreamPass(p.harness.deps, 'payment_intents');
    expect(second.status).toBe('succeeded');
    const row = await p.database.db
      .selectFrom('rewards.payment_intents')
      .select('status')
      .where('id', '=', intent.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('paid');
    const stored = await p.database.db
      .selectFrom('rewards.payment_intents')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    figures.expiredToken = {
      refreshes: tokenRequests(sim) - tokenCallsBefore,
      intentsApi: sim.control.intents.list().length,
      intentsWarehouse: Number(stored.n),
    };
    expect(tokenRequests(sim) - tokenCallsBefore).toBeGreaterThanOrEqual(1);
    expect(Number(stored.n)).toBe(sim.control.intents.list().length);
  });

  it('a revoked refresh token fails once, clearly, and is not hammered afterwards', async () => {
    const refreshToken = sim.control.credentials.issueRefreshToken();
    const p = await pipeline('revoked', { SVC_OAUTH_REFRESH_TOKEN: refreshToken });
    withFaults({});
    expect((await runStreamPass(p.harness.deps, 'payment_intents')).status).toBe('succeeded');
    // Refresh tokens rotate on use, so the one we configured is already replaced: revoke the member's.
    const revoked = sim.control.credentials.revokeRefreshTokensOf(sim.control.members.defaultMemberId);
    expect(revoked).toBeGreaterThan(0);
    sim.control.clock.advance(61 * 60_000);
    sim.control.requests.clear();
    const failures: string[] = [];
    for (let i = 0; i < 4; i++) {
      try {
        const result = await runStreamPass(p.harness.deps, 'payment_intents');
        failures.push('runId' in result ? `${result.status}: ${result.error ?? ''}` : result.status);
      } catch (error) {
        failures.push(`${(error as Error).name}: ${(error as Error).message}`);
      }
    }
    const tokenCalls = tokenRequests(sim);
    const status = await runCli('faults-status', ['status', '--json'], {
      DATABASE_URL: p.database.url,
      REDIS_PREFIX: p.env.REDIS_PREFIX ?? '',
      SVC_API_BASE_URL: sim.baseUrl,
      ...oauthEnv(p.env),
    });
    // status exits 1 when its verdict is not OK (issue 40), and a revoked token is such a verdict.
    expect(status.code, status.stderr).toBe(1);
    const report = JSON.parse(status.stdout) as {
      oauth: { needsReauthorization: boolean; lastError: string | null };
      verdict: { problems: string[] };
    };
    const oauth = report.oauth;
    expect(report.verdict.problems).toContain('OAuth refresh token revoked: run `rewards-etl auth`');
    figures.revokedRefreshToken = { passes: failures, tokenEndpointCalls: tokenCalls, oauth };
    expect(failures[0]).toMatch(/RefreshTokenRevoked|revoked|invalid_grant/i);
    expect(failures.slice(1).every((f) => !f.startsWith('succeeded'))).toBe(true);
    expect(tokenCalls).toBeLessThanOrEqual(1);
    expect(oauth.needsReauthorization).toBe(true);
    expect(JSON.stringify(failures)).not.toContain(refreshToken);
  });
});

function oauthEnv(env: Record<string, string>): Record<string, string> {
  const keys = ['SVC_API_BASE_URL', 'SVC_OAUTH_CLIENT_ID', 'SVC_OAUTH_CLIENT_SECRET', 'TOKEN_ENCRYPTION_KEY'];
  return Object.fromEntries(keys.flatMap((key) => (env[key] === undefined ? [] : [[key, env[key]]])));
}

function tokenRequests(sim: RunningSimulator): number {
  return sim.control.requests.list().filter((r) => r.path.endsWith('/oauth/token')).length;
}

/** Retries the API client logged ('… retrying' for errors, 'rate limited …' for 429s). */
function retryLines(logs: string): { total: number; rateLimited: number; byError: Record<string, number> } {
  const byError: Record<string, number> = {};
  let rateLimited = 0;
  for (const line of logs.split('\n')) {
    if (!line.includes('retrying') && !line.includes('rate limited by the partner API')) continue;
    const entry = JSON.parse(line) as { msg?: string; error?: string };
    if (entry.msg === 'rate limited by the partner API; every process pauses') rateLimited++;
    else if (entry.msg === 'partner API request failed; retrying')
      byError[entry.error ?? '?'] = (byError[entry.error ?? '?'] ?? 0) + 1;
  }
  const total = rateLimited + Object.values(byError).reduce((a, b) => a + b, 0);
  return { total, rateLimited, byError };
}
