import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { createProcessPool } from '../../helpers/processes.js';
import { createTestRedis, deleteRedisPrefix, testRedisPrefix } from '../../helpers/redis.js';
import { cliEnv } from './harness.js';

/** Whether a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** This machine's addresses that are not loopback (IPv4), to try the worker's port on. */
function externalAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((entries) => entries ?? [])
    .filter((entry) => !entry.internal && entry.family === 'IPv4')
    .map((entry) => entry.address);
}

describe('the worker HTTP server, safe by default', () => {
  let sim: RunningSimulator;
  let t: TestDatabase;
  const prefix = testRedisPrefix('worker-surface');
  const pool = createProcessPool();

  beforeAll(async () => {
    sim = await startSimulator({ seed: 31, checkIns: 100, days: 1 });
    t = await createTestDatabase('worker_surface');
  });

  afterAll(async () => {
    await pool.cleanup();
    const redis = createTestRedis();
    await deleteRedisPrefix(redis, prefix);
    await redis.quit();
    await t?.drop();
    await sim?.close();
  });

  it('with default settings the worker listens on 127.0.0.1 only, and its log line says so', async () => {
    const env = cliEnv({ sim, databaseUrl: t.url, redisPrefix: prefix });
    expect(env['HTTP_HOST']).toBeUndefined();
    const worker = pool.spawnCli(['worker', '--shutdown-deadline', '1'], { env, label: 'surface-worker' });
    const line = await worker.waitForLog((entry) => String(entry.msg).startsWith('status page on'), 45_000);
    const port = Number(line['port']);
    expect(line['host']).toBe('127.0.0.1');
    expect(line.msg).toBe(`status page on http://127.0.0.1:${port}/`);
    expect(await accepts('127.0.0.1', port)).toBe(true);
    for (const address of externalAddresses()) expect(await accepts(address, port)).toBe(false);
    expect((await worker.stop('SIGTERM', 15_000)).code).toBe(0);
  });

  it.each([
    ['STATUS_TOKEN', { STATUS_TOKEN: 'too-short' }],
    ['SVC_API_BASE_URL', { SVC_API_BASE_URL: 'http://partner.example.test/v1' }],
    ['SVC_OAUTH_TOKEN_URL', { SVC_OAUTH_TOKEN_URL: 'http://partner.example.test/oauth/token' }],
    ['RETRY_AFTER_MAX', { RETRY_AFTER_MAX: '30d' }],
  ])('a bad %s stops the worker with exit 2 naming the variable', async (variable, bad) => {
    const env = { ...cliEnv({ sim, databaseUrl: t.url, redisPrefix: prefix }), ...bad };
    const ran = await pool.runCli(['worker'], { env, timeoutMs: 30_000 });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain(`${variable}: `);
    expect(ran.stderr).not.toContain('too-short');
  });
});
