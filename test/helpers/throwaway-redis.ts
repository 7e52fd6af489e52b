import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';
import { guardServerDir } from './server-dir.js';

// A standalone `redis-server` of our own for a test that restarts or kills Redis: a free loopback
// port, no persistence (as the machine's test Redis), its log and files in a temp dir. The
// machine's Redis is never touched. `stop()` ends it and removes the dir; test/helpers/server-dir.ts
// does the same if this process exits or is killed first.

const DIR_PREFIX = 'rewards-etl-redis-';

export interface ThrowawayRedis {
  port: number;
  /** `redis://127.0.0.1:<port>`. */
  url: string;
  dir: string;
  /** SIGTERM (a clean shutdown that saves nothing), down for `downMs`, then the same port again. */
  restart(options?: { downMs?: number }): Promise<void>;
  /** Stops it and removes its directory. Safe to call twice. */
  stop(): Promise<void>;
}

export async function startThrowawayRedis(): Promise<ThrowawayRedis> {
  const dir = mkdtempSync(join(tmpdir(), DIR_PREFIX));
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  const launch = async () => {
    const started = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
        '--logfile',
        join(dir, 'redis.log'),
      ],
      { cwd: dir, stdio: 'ignore' },
    );
    child = started;
    exited = new Promise<void>((resolve) => started.once('exit', () => resolve()));
    // For the watcher, which outlives this process.
    writeFileSync(join(dir, 'server.pid'), `${started.pid ?? ''}\n`);
    await waitForPing(port, running, dir);
  };
  const killNow = () => {
    if (running()) child?.kill('SIGKILL');
  };
  let stopped = false;
  const guard = guardServerDir(dir, { stopNow: killNow, pidFiles: ['server.pid'] });
  try {
    await launch();
  } catch (error) {
    killNow();
    rmSync(dir, { recursive: true, force: true });
    guard.release();
    throw error;
  }

  return {
    port,
    url,
    dir,
    async restart({ downMs = 0 } = {}) {
      if (running()) child?.kill('SIGTERM');
      await exited;
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
      await launch();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (running()) {
        child?.kill('SIGTERM');
        const timer = setTimeout(killNow, 5_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
      guard.release();
    },
  };
}

/** Resolves once the server answers PING (up to 30 s); rejects if it exits first. */
async function waitForPing(port: number, alive: () => boolean, dir: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (!alive())
      throw new Error(`redis-server on ${port} exited at start-up: ${tail(join(dir, 'redis.log'))}`);
    const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      if ((await client.ping()) === 'PONG') return;
    } catch {
      // not up yet
    } finally {
      client.disconnect();
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`redis-server on ${port} did not answer PING within 30 s: ${tail(join(dir, 'redis.log'))}`);
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-10).join('\n');
  } catch {
    return '(no log)';
  }
}
