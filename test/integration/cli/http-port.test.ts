import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKER_NODE_OPTIONS } from '../../../src/runtime/heap-policy.js';
import type { StatusReport } from '../../../src/status/status-report.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { createProcessPool } from '../../helpers/processes.js';
import { TEST_REDIS_URL, createTestRedis, deleteRedisPrefix, testRedisPrefix } from '../../helpers/redis.js';

// Issue 40 item 4: the worker binds HTTP_HOST:HTTP_PORT before it takes any job.

const pool = createProcessPool();
const prefix = testRedisPrefix('http_port');
let database: TestDatabase;
let taken: Server;
let takenPort: number;

beforeAll(async () => {
  database = await createTestDatabase('http_port');
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  takenPort = (taken.address() as { port: number }).port;
});
afterAll(async () => {
  await pool.cleanup();
  taken.close();
  const redis = createTestRedis();
  await deleteRedisPrefix(redis, prefix);
  await redis.quit();
  await database.drop();
});

const env = (httpPort: string) => ({
  DATABASE_URL: database.url,
  REDIS_URL: TEST_REDIS_URL,
  REDIS_PREFIX: prefix,
  // Nothing listens here: jobs would fail, but none may start when the port is taken.
  SVC_API_BASE_URL: 'http://127.0.0.1:9/v1',
  SVC_API_KEY: 'k',
  HTTP_PORT: httpPort,
  LOG_LEVEL: 'info',
});

describe('a worker binds its HTTP port before taking any job', () => {
  it('a taken HTTP_PORT exits 1 naming HTTP_PORT, before the worker starts', async () => {
    const ran = await pool.runCli(['worker'], { env: env(String(takenPort)), timeoutMs: 60_000 });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(`rewards-etl: HTTP_PORT ${takenPort} on 127.0.0.1 is taken`);
    expect(ran.stderr).not.toContain('"worker started"');
    expect(ran.stderr).not.toContain('job schedules registered');
  });

  it('HTTP_PORT=0 binds a free port, named in the log and in the worker record `status` shows', async () => {
    // Started as the image and the systemd unit start it: the heap policy in NODE_OPTIONS.
    const worker = pool.spawnCli(['worker'], { env: { ...env('0'), NODE_OPTIONS: WORKER_NODE_OPTIONS } });
    const line = await worker.waitForLog((entry) => entry.msg?.startsWith('status page on') === true, 60_000);
    const port = line.port as number;
    expect(port).toBeGreaterThan(0);
    // The start line says which heap limit the worker runs with (src/runtime/heap-policy.ts).
    const started = await worker.waitForLog((entry) => entry.msg === 'worker started', 60_000);
    expect(started.heapLimitMiB).toBeGreaterThanOrEqual(1024);
    expect(started.heapLimitMiB).toBeLessThan(1100);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    let report: StatusReport | undefined;
    for (let i = 0; i < 60 && report?.workers.live.length !== 1; i++) {
      const ran = await pool.runCli(['status', '--json'], { env: env('0'), timeoutMs: 60_000 });
      report = JSON.parse(ran.stdout) as StatusReport;
      if (report.workers.live.length !== 1) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(report?.workers.live[0]?.httpPort).toBe(port);
    const ran = await pool.runCli(['status'], { env: env('0'), timeoutMs: 60_000 });
    expect(ran.stdout).toContain(`(http ${port})`);
    expect((await worker.stop('SIGTERM', 30_000)).code).toBe(0);
  });
});
