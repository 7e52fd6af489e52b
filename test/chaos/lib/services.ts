import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** Redis here has no persistence: a restart loses every queue, scheduler and rate-limit key. */
export async function restartRedis(downMs = 2_000): Promise<void> {
  await exec('redis-cli', ['-p', '6379', 'shutdown', 'nosave']).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, downMs));
  await exec('redis-server', [
    '--daemonize',
    'yes',
    '--bind',
    '127.0.0.1',
    '-::1',
    '--port',
    '6379',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    '/tmp',
    '--logfile',
    '/tmp/redis-chaos.log',
  ]);
  for (let i = 0; i < 50; i++) {
    const ok = await exec('redis-cli', ['-p', '6379', 'ping']).then(
      (r) => r.stdout.trim() === 'PONG',
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('redis did not come back');
}

/** Restarts the local Postgres cluster (every connection is dropped; the server is down for a moment). */
export async function restartPostgres(): Promise<void> {
  const version = readdirSync('/etc/postgresql')[0];
  if (version === undefined) throw new Error('no postgres cluster in /etc/postgresql');
  await exec('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'restart']);
}
