import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { createProcessPool, type SpawnedProcess } from '../../helpers/processes.js';
import { freePort } from '../../helpers/redis-topology.js';

const exec = promisify(execFile);

/** A CA and a certificate for 127.0.0.1 signed by it, made with openssl for this run only. */
async function makeCertificates(dir: string): Promise<void> {
  const openssl = (...args: string[]) => exec('openssl', args, { cwd: dir });
  await openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=rewards-etl test CA',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
  );
  await openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
  );
  writeFileSync(join(dir, 'san.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  await openssl(
    'x509',
    '-req',
    '-days',
    '1',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-extfile',
    'san.cnf',
    '-out',
    'server.pem',
  );
}

// REDIS_URL=rediss://… is TLS: the CLI reaches a TLS-only Redis, trusting a private CA given the
// Node way (NODE_EXTRA_CA_CERTS), and refuses a server whose certificate it cannot verify.
describe('Redis over TLS (rediss://)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rewards-etl-tls-'));
  const pool = createProcessPool();
  let redis: SpawnedProcess;
  let port: number;
  let t: TestDatabase;

  beforeAll(async () => {
    await makeCertificates(dir);
    port = await freePort();
    t = await createTestDatabase('redis_tls');
    redis = pool.spawn(
      'redis-server',
      [
        '--port',
        '0',
        '--tls-port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
        '--tls-cert-file',
        join(dir, 'server.pem'),
        '--tls-key-file',
        join(dir, 'server.key'),
        '--tls-ca-cert-file',
        join(dir, 'ca.pem'),
        '--tls-auth-clients',
        'no',
      ],
      { env: {}, label: 'redis-tls' },
    );
    // redis-server logs to stdout.
    const readyBy = Date.now() + 15_000;
    while (!redis.stdout().includes('Ready to accept connections')) {
      if (Date.now() > readyBy) throw new Error(`redis-server (TLS) did not start:\n${redis.stdout()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  afterAll(async () => {
    await pool.cleanup();
    await t?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string> = {}) => ({
    DATABASE_URL: t.url,
    REDIS_URL: `rediss://127.0.0.1:${port}`,
    REDIS_PREFIX: 'rtest-tls',
    LOG_LEVEL: 'warn',
    ...extra,
  });

  it('status reads the queues through TLS when the CA is trusted', async () => {
    const run = await pool.runCli(['status', '--json'], {
      env: env({ NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') }),
      timeoutMs: 60_000,
    });
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as {
      queues: { available: boolean };
      workers: { available: boolean };
    };
    expect(report.queues.available).toBe(true);
    expect(report.workers.available).toBe(true);
  });

  it('a certificate it cannot verify is refused: queues reported unreadable, not read in clear', async () => {
    const run = await pool.runCli(['status', '--json'], { env: env(), timeoutMs: 60_000 });
    // status exits 1 when its verdict is not OK (issue 40): here Redis can't be read.
    expect(run.code, run.stderr).toBe(1);
    const report = JSON.parse(run.stdout) as {
      queues: { available: boolean };
      verdict: { ok: boolean; problems: string[] };
    };
    expect(report.queues.available).toBe(false);
    expect(report.verdict.problems).toContain('Redis unreachable: queue depths unknown');
  });
});

describe('inconsistent Redis settings', () => {
  const pool = createProcessPool();
  afterAll(() => pool.cleanup());

  it.each([
    [
      { REDIS_URL: 'redis://127.0.0.1:6379', REDIS_SENTINELS: '127.0.0.1:26379', REDIS_SENTINEL_NAME: 'm' },
      'REDIS_URL',
    ],
    [
      { REDIS_SENTINELS: '127.0.0.1:26379', REDIS_SENTINEL_PASSWORD: 'sentinel-secret-77' },
      'REDIS_SENTINEL_NAME',
    ],
    [{ REDIS_CLUSTER_NODES: '127.0.0.1:7000,nowhere' }, 'REDIS_CLUSTER_NODES'],
  ])(
    'stop start-up with exit 2 naming the variable, and no password in the message: %j',
    async (env, variable) => {
      const run = await pool.runCli(['worker'], { env, timeoutMs: 30_000 });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`${variable}: `);
      expect(run.stderr).not.toContain('sentinel-secret-77');
    },
  );
});
