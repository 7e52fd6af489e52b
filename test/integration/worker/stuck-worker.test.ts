import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { readWorkers } from '../../../src/status/queue-depths.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { startFreezingProxy, type FreezingProxy } from '../../helpers/freezing-proxy.js';
import { createProcessPool } from '../../helpers/processes.js';
import { createTestRedis, deleteRedisPrefix, TEST_REDIS_URL, testRedisPrefix } from '../../helpers/redis.js';
import { cliEnv, pollUntil } from './harness.js';

// The failure BullMQ's issue tracker shows after a failover: a worker process that stays up,
// answers its probes, and takes no job because its queue connections are dead (half-open: the
// server vanished without a reset). Here a TCP proxy between the worker and Redis freezes the
// connections the worker's queues use (named rewards-etl-worker-queues), while the connection its
// liveness watchdog and limiter use keeps working, as a fresh connection to a new primary would.
describe('a worker whose queue connections go dead', () => {
  let sim: RunningSimulator;
  let t: TestDatabase;
  let proxy: FreezingProxy;
  const prefix = testRedisPrefix('stuck');
  const pool = createProcessPool();

  beforeAll(async () => {
    sim = await startSimulator({ seed: 30, checkIns: 200, days: 1 });
    t = await createTestDatabase('worker_stuck');
    const redis = new URL(TEST_REDIS_URL);
    proxy = await startFreezingProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
  });

  afterAll(async () => {
    await pool.cleanup();
    await proxy?.close();
    const redis = createTestRedis();
    await deleteRedisPrefix(redis, prefix);
    await redis.quit();
    await t?.drop();
    await sim?.close();
  });

  it('is found stuck within WORKER_IDLE_TIMEOUT, fails /readyz, says so in its record, and exits 1 for its supervisor', async () => {
    const env = {
      ...cliEnv({ sim, databaseUrl: t.url, redisPrefix: prefix }),
      REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
      WORKER_IDLE_TIMEOUT: '5s',
      ALERTS_EVERY: '1s',
    };
    const worker = pool.spawnCli(['worker', '--shutdown-deadline', '1'], { env, label: 'stuck-worker' });
    const line = await worker.waitForLog((entry) => String(entry.msg).startsWith('status page on'), 45_000);
    const readyz = async () => {
      const response = await fetch(`http://127.0.0.1:${Number(line['port'])}/readyz`);
      return {
        status: response.status,
        body: (await response.json()) as { checks: Record<string, unknown> },
      };
    };
    // Healthy first: ready, and its record shows a loop that fetches.
    const healthy = await pollUntil(readyz, (r) => r.status === 200, 30_000);
    expect(healthy.body.checks['worker']).toEqual({ ok: true });

    const frozenAt = Date.now();
    proxy.freeze('rewards-etl-worker-queues');
    await worker.waitForLog((entry) => String(entry.msg).startsWith('queue worker stuck'), 30_000);
    const detectedAfterMs = Date.now() - frozenAt;
    const frozen = proxy.frozen();
    const notReady = await readyz().catch(() => null);
    const direct = createTestRedis();
    const records = await readWorkers(direct, prefix, Date.now());
    await direct.quit();
    const exit = await worker.waitForExit(40_000);
    const exitedAfterMs = Date.now() - frozenAt;
    console.info(
      `stuck worker: ${frozen} connections frozen; detected after ${(detectedAfterMs / 1000).toFixed(1)} s, exited after ${(exitedAfterMs / 1000).toFixed(1)} s`,
    );

    expect(frozen).toBeGreaterThan(0);
    // Detection within the timeout plus one check interval (5 s) and some scheduling slack.
    expect(detectedAfterMs).toBeLessThan(20_000);
    if (notReady !== null) {
      expect(notReady.status).toBe(503);
      expect(notReady.body.checks['worker']).toMatchObject({
        ok: false,
        error: expect.stringContaining('queue worker not taking jobs'),
      });
    }
    expect(records.available && records.live.some((record) => record.stuck)).toBe(true);
    expect(exit.code).toBe(1);
    expect(worker.stderr()).toContain('exiting with status 1 so the supervisor starts a fresh worker');
  });
});
