import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.js';
import { guardServerDir, isGuardedHere } from './server-dir.js';

// A PostgreSQL cluster of our own for a test (or a bench) that kills, restarts or measures a server:
// `initdb` into a temp dir from the installed server binaries, `postgres` on a free loopback port,
// trust auth for the `postgres` user, no Unix socket outside the dir. The machine's own PostgreSQL is
// never touched. `stop()` ends it and removes the dir; test/helpers/server-dir.ts does the same if
// this process exits or is killed first.

const exec = promisify(execFile);
const DIR_PREFIX = 'rewards-etl-pg-';

export interface ThrowawayPostgres {
  host: string;
  port: number;
  /** `postgres://postgres@127.0.0.1:<port>/<database>` (default `postgres`). */
  url(database?: string): string;
  /** The data directory (logs in `<dir>/postgres.log`). */
  dir: string;
  /** The postmaster's pid while it runs. */
  pid(): number | undefined;
  /** A fast restart (`pg_ctl restart -m fast`): every connection is dropped, the data kept. */
  restart(options?: { downMs?: number }): Promise<void>;
  /** SIGKILL of the postmaster: crash recovery on the next start. */
  kill(): Promise<void>;
  /** Starts it again after `kill()` (or a stop through `restart`'s down time). */
  start(): Promise<void>;
  /** Stops the server (immediate) and removes its directory. Safe to call twice. */
  stop(): Promise<void>;
}

export interface ThrowawayPostgresOptions {
  /** `postgresql.conf` settings on top of the defaults below (e.g. `{ fsync: 'on' }` for a bench). */
  settings?: Record<string, string>;
}

/** Where Debian (or a PATH) has the server binaries: `initdb`, `pg_ctl`, `postgres`. */
export function postgresBinDir(): string | undefined {
  const fromConfig = (() => {
    try {
      return execFileSync('pg_config', ['--bindir'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    } catch {
      return undefined;
    }
  })();
  const candidates = [
    ...(existsSync('/usr/lib/postgresql')
      ? readdirSync('/usr/lib/postgresql')
          .sort((a, b) => Number(b) - Number(a))
          .map((version) => `/usr/lib/postgresql/${version}/bin`)
      : []),
    ...(fromConfig === undefined ? [] : [fromConfig]),
  ];
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres')));
}

/** initdb refuses root: as root the cluster belongs to the `postgres` user (Debian's), else to us. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
      return { uid, gid };
    } catch {
      // try the next
    }
  }
  throw new Error('running as root and no `postgres` or `nobody` user to run a PostgreSQL cluster as');
}

const DEFAULT_SETTINGS: Record<string, string> = {
  listen_addresses: "'127.0.0.1'",
  max_connections: '200',
  shared_buffers: "'128MB'",
  // Tests restart and kill it; durability across a power cut is not what they check.
  fsync: 'off',
  synchronous_commit: 'off',
  full_page_writes: 'off',
  logging_collector: 'off',
  log_min_messages: 'warning',
};

/** Starts a new, empty cluster; resolves once it accepts connections. */
export async function startThrowawayPostgres(
  options: ThrowawayPostgresOptions = {},
): Promise<ThrowawayPostgres> {
  const bin = postgresBinDir();
  if (bin === undefined)
    throw new Error('no PostgreSQL server binaries (initdb, postgres): apt-get install postgresql');
  removeStaleClusters();
  const dir = mkdtempSync(join(tmpdir(), DIR_PREFIX));
  const data = join(dir, 'data');
  const owner = serverUser();
  if (owner !== undefined) chownSync(dir, owner.uid, owner.gid);
  const asOwner = owner === undefined ? {} : { uid: owner.uid, gid: owner.gid };
  await exec(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'], {
    ...asOwner,
    cwd: dir,
    timeout: 60_000,
  });
  const port = await freePort();
  const settings = {
    ...DEFAULT_SETTINGS,
    port: String(port),
    unix_socket_directories: `'${dir}'`,
    ...options.settings,
  };
  writeFileSync(
    join(data, 'postgresql.auto.conf'),
    Object.entries(settings)
      .map(([name, value]) => `${name} = ${value}\n`)
      .join(''),
  );
  if (owner !== undefined) chownSync(join(data, 'postgresql.auto.conf'), owner.uid, owner.gid);

  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const launch = async () => {
    const logFile = join(dir, 'postgres.log');
    const started = spawn('sh', ['-c', `exec "${join(bin, 'postgres')}" -D "${data}" >>"${logFile}" 2>&1`], {
      ...asOwner,
      cwd: dir,
      stdio: 'ignore',
    });
    child = started;
    exited = new Promise<void>((resolve) => started.once('exit', () => resolve()));
    await waitUntilReady(port, () => started.exitCode === null && started.signalCode === null, logFile);
  };
  // A crash of the whole server: the postmaster and every backend (each backend runs in a session of
  // its own, so a process-group kill would miss them; they are found by their parent pid).
  const killNow = () => {
    if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const backends = childPids(child.pid);
    child.kill('SIGKILL');
    for (const pid of backends) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  let stopped = false;
  const guard = guardServerDir(dir, { stopNow: killNow, pidFiles: ['data/postmaster.pid'], signal: 'QUIT' });

  try {
    await launch();
  } catch (error) {
    killNow();
    rmSync(dir, { recursive: true, force: true });
    guard.release();
    throw error;
  }

  const server: ThrowawayPostgres = {
    host: '127.0.0.1',
    port,
    dir,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    pid: () =>
      child !== undefined && child.exitCode === null && child.signalCode === null ? child.pid : undefined,
    async restart({ downMs = 0 } = {}) {
      // SIGINT is the postmaster's "fast" shutdown: sessions end, a checkpoint, then exit.
      child?.kill('SIGINT');
      await exited;
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
      await launch();
    },
    async kill() {
      const backends = child?.pid === undefined ? [] : childPids(child.pid);
      killNow();
      await exited;
      await waitForGone(backends);
    },
    async start() {
      if (server.pid() === undefined) await launch();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (child !== undefined && child.exitCode === null && child.signalCode === null) {
        child.kill('SIGQUIT'); // immediate shutdown
        const timer = setTimeout(killNow, 5_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
      guard.release();
    },
  };
  return server;
}

/** The pids whose parent is `parent` (Linux /proc). */
function childPids(parent: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // stat: "pid (comm) state ppid …"; comm may hold spaces, so read after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** A new postmaster needs the killed one's shared memory gone, so its backends must be gone first. */
async function waitForGone(pids: number[]): Promise<void> {
  for (let waited = 0; waited < 10_000; waited += 50) {
    const alive = pids.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    if (alive.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function waitUntilReady(port: number, alive: () => boolean, logFile: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (!alive()) throw new Error(`postgres exited at start-up: ${tail(logFile)}`);
    const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('select 1');
      await client.end();
      return;
    } catch (error) {
      lastError = error;
      await client.end().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`postgres on ${port} did not accept connections within 60 s: ${tail(logFile)}`, {
    cause: lastError,
  });
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-10).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Dirs of clusters whose watcher and owner are gone (a machine crash): removed before a new start. */
function removeStaleClusters(): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const dir = join(tmpdir(), name);
    const pidFile = join(dir, 'data', 'postmaster.pid');
    let running = false;
    try {
      const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
      if (Number.isInteger(pid) && pid > 0) {
        process.kill(pid, 0);
        running = true;
      }
    } catch {
      running = false;
    }
    if (!running && !isGuardedHere(dir)) {
      // A dir without postmaster.pid may be one being made right now by another test process.
      if (!existsSync(pidFile)) continue;
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
