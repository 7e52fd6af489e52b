import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { alive } from '../../helpers/leftovers.js';

// Issue 37: a test process killed by SIGKILL (an out-of-memory kill, a Ctrl-C'd vitest worker)
// leaves no server and no temp dir behind. The child starts a throw-away PostgreSQL, a throw-away
// redis-server and a Sentinel set (5 redis-servers); once it is killed, test/helpers/server-dir.ts's
// watchers must stop every one of them and remove their dirs.

const CHILD = fileURLToPath(new URL('./start-servers-then-hang.ts', import.meta.url));

interface Started {
  dirs: string[];
  postgresPid: number;
  redisPort: number;
  sentinelPorts: number[];
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function waitFor(what: string, timeoutMs: number, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('servers a test starts die with it', () => {
  test('SIGKILL of the owner: every server stops and every dir is removed', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`child exited (${code}) before starting its servers`)));
    });
    const started = JSON.parse(line) as Started;
    const ports = [started.redisPort, ...started.sentinelPorts];
    expect(started.dirs.every((dir) => existsSync(dir))).toBe(true);
    expect(alive(started.postgresPid)).toBe(true);
    expect(await Promise.all(ports.map(accepts))).toEqual(ports.map(() => true));

    child.kill('SIGKILL');
    // The watchers poll once a second; PostgreSQL gets 2 s of SIGQUIT before SIGKILL.
    await waitFor('the servers to stop and their dirs to go', 30_000, async () => {
      const open = await Promise.all(ports.map(accepts));
      return (
        !alive(started.postgresPid) &&
        open.every((isOpen) => !isOpen) &&
        started.dirs.every((dir) => !existsSync(dir))
      );
    });
  });
});
