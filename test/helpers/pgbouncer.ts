import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireTool } from './optional-tools.js';
import { ADMIN_URL } from './postgres.js';

export interface PgBouncerOptions {
  /** `transaction` (the default: what Supabase's 6543 and most managed poolers run) or `session`. */
  poolMode?: 'transaction' | 'session';
  /** Server connections per database and user: keep it below the clients' connections. */
  poolSize?: number;
}

export interface RunningPgBouncer {
  port: number;
  poolMode: 'transaction' | 'session';
  poolSize: number;
  /** A database URL through this pooler. */
  url(database: string): string;
  /** SIGSTOP: the path through the pooler hangs, as a cut network path does. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** What PgBouncer logged (stderr). */
  log(): string;
  stop(): Promise<void>;
}

/**
 * Starts PgBouncer on a free loopback port, in a temp dir of its own, in front of the test
 * Postgres (every database name, `*`), `auth_type trust`. As root it drops to `nobody` (PgBouncer
 * refuses to run as root). Call `stop()` in afterAll; the process is also killed if the test
 * process exits first.
 */
export async function startPgBouncer(options: PgBouncerOptions = {}): Promise<RunningPgBouncer> {
  // Debian's PgBouncer; a test that starts one skips first through missingTools('pgbouncer').
  const pgbouncer = requireTool('pgbouncer');
  const upstream = new URL(ADMIN_URL);
  const poolMode = options.poolMode ?? 'transaction';
  const poolSize = options.poolSize ?? 4;
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const dir = await mkdtemp(join(tmpdir(), 'rewards-pgbouncer-'));
    // Readable by `nobody` once PgBouncer has dropped root.
    await chmod(dir, 0o755);
    const users = join(dir, 'userlist.txt');
    await writeFile(users, `"${decodeURIComponent(upstream.username)}" ""\n`, { mode: 0o644 });
    const ini = join(dir, 'pgbouncer.ini');
    await writeFile(
      ini,
      [
        '[databases]',
        `* = host=${upstream.hostname} port=${upstream.port || '5432'}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${users}`,
        `pool_mode = ${poolMode}`,
        `default_pool_size = ${poolSize}`,
        'min_pool_size = 0',
        'reserve_pool_size = 0',
        'max_client_conn = 500',
        // node-postgres sends none of these, other drivers do; ignoring them is what poolers do.
        'ignore_startup_parameters = extra_float_digits,options',
        'server_login_retry = 1',
        'log_connections = 0',
        'log_disconnections = 0',
        '',
      ].join('\n'),
      { mode: 0o644 },
    );
    const asRoot = process.getuid?.() === 0;
    const child = spawn(pgbouncer, [...(asRoot ? ['-u', 'nobody'] : []), ini], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
    const killOnExit = () => child.kill('SIGKILL');
    process.once('exit', killOnExit);
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    if (await listening(port, child)) {
      return running({ child, dir, port, poolMode, poolSize, log: () => log, exited, killOnExit });
    }
    process.off('exit', killOnExit);
    child.kill('SIGKILL');
    await exited;
    await rm(dir, { recursive: true, force: true });
    // The free port may have been taken between choosing and binding it: try another.
    if (attempt >= 5) throw new Error(`PgBouncer did not start:\n${log}`);
  }
}

function running(input: {
  child: ChildProcess;
  dir: string;
  port: number;
  poolMode: 'transaction' | 'session';
  poolSize: number;
  log: () => string;
  exited: Promise<void>;
  killOnExit: () => void;
}): RunningPgBouncer {
  const { child, port } = input;
  const upstream = new URL(ADMIN_URL);
  let stopped = false;
  return {
    port,
    poolMode: input.poolMode,
    poolSize: input.poolSize,
    url(database) {
      const url = new URL(ADMIN_URL);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      url.pathname = `/${database}`;
      url.username = upstream.username;
      return url.toString();
    },
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    log: input.log,
    async stop() {
      if (stopped) return;
      stopped = true;
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await input.exited;
      clearTimeout(timer);
      process.off('exit', input.killOnExit);
      await rm(input.dir, { recursive: true, force: true });
    },
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

/** Whether PgBouncer accepts TCP connections on `port` within 10 s (false if it exited). */
async function listening(port: number, child: ChildProcess): Promise<boolean> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) return false;
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/** Advisory locks held in `database` right now (by any session, pooled server connections included). */
export const ADVISORY_LOCKS_SQL = `
  select count(*)::int as n from pg_locks l join pg_database d on d.oid = l.database
  where l.locktype = 'advisory' and d.datname = $1`;
