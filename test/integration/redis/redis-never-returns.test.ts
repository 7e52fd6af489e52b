import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { freePort } from '../../helpers/free-port.js';
import { createProcessPool } from '../../helpers/processes.js';
import { testRedisPrefix } from '../../helpers/redis.js';
import { cliEnv, pollUntil } from '../worker/harness.js';

// Issue 38, "what the process does if Redis never comes back": a worker on a Redis server of its
// own (never the machine's), which is then killed for good. /readyz says so at once, and after
// WORKER_REDIS_UNREACHABLE_TIMEOUT with no job progress the worker exits 1 with one line saying
// why, for its supervisor to start a fresh one.
describe('a worker whose Redis never comes back', () => {
  let sim: RunningSimulator;
  let t: TestDatabase;
  let dir: string;
  const pool = createProcessPool();

  beforeAll(async () => {
    sim = await startSimulator({ seed: 38, checkIns: 200, days: 1 });
    t = await createTestDatabase('redis_never_returns');
    dir = mkdtempSync(join(tmpdir(), 'rewards-etl-redis-gone-'));
  });

  afterAll(async () => {
    await pool.cleanup();
    await t?.drop();
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers /readyz 503 meanwhile and exits 1 after WORKER_REDIS_UNREACHABLE_TIMEOUT, saying so', async () => {
    const port = await freePort();
    const redis = pool.spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      { env: {}, label: 'own-redis' },
    );
    const env = {
      ...cliEnv({ sim, databaseUrl: t.url, redisPrefix: testRedisPrefix('gone') }),
      REDIS_URL: `redis://127.0.0.1:${port}`,
      WORKER_REDIS_UNREACHABLE_TIMEOUT: '10s',
    };
    const worker = pool.spawnCli(['worker', '--shutdown-deadline', '1'], { env, label: 'worker-redis-gone' });
    const line = await worker.waitForLog((entry) => String(entry.msg).startsWith('status page on'), 45_000);
    const readyz = async () => {
      const response = await fetch(`http://127.0.0.1:${Number(line['port'])}/readyz`);
      return {
        status: response.status,
        body: (await response.json()) as { checks: Record<string, unknown> },
      };
    };
    await pollUntil(readyz, (r) => r.status === 200, 30_000);

    redis.kill('SIGKILL');
    const goneAt = Date.now();
    const notReady = await pollUntil(readyz, (r) => r.status === 503, 15_000);
    expect(notReady.body.checks['redis']).toEqual({ ok: false, error: 'redis unreachable' });
    const exit = await worker.waitForExit(90_000);
    const exitedAfterS = (Date.now() - goneAt) / 1000;
    console.info(`redis gone for good: the worker exited ${exit.code} after ${exitedAfterS.toFixed(1)} s`);

    expect(exit.code).toBe(1);
    const reasons = worker
      .logLines()
      .filter((entry) => String(entry.msg).startsWith('redis unreachable for'));
    expect(reasons).toHaveLength(1);
    expect(reasons[0]!.msg).toMatch(
      /^redis unreachable for \d+ s with no job progress \(WORKER_REDIS_UNREACHABLE_TIMEOUT\): exiting with status 1/,
    );
    // Not before the timeout: 10 s of outage first.
    expect(exitedAfterS).toBeGreaterThanOrEqual(10);
  });
});
