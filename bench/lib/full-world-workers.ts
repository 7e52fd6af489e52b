// The measured workers of bench/full-world.ts, two ways: each in a child process started as a
// deployed worker is (`node --import tsx src/cli/main.ts worker`, its own event loop and its own
// health port), or in the bench's own process (`startWorker`, the old way, `--in-process`), so the
// two can be compared.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { JOB_SET } from '../../jobs/registry.js';
import { loadConfig } from '../../src/config/config.js';
import type { Logger } from '../../src/log.js';
import { startWorker, type RunningWorker } from '../../src/worker/worker.js';

export type WorkerMode = 'child-process' | 'in-process';

export interface ChildExit {
  worker: number;
  code: number | null;
  signal: string | null;
  /** Exited before the bench asked it to stop. */
  early: boolean;
}

export interface MeasuredWorkers {
  mode: WorkerMode;
  /** Log files of the child processes (none in-process). */
  logs: string[];
  /** Stops every worker and waits for it: SIGTERM, then SIGKILL after `timeoutMs` for a child. */
  stop(timeoutMs: number): Promise<void>;
  /** How each child ended (empty in-process, or while they run). */
  exits(): ChildExit[];
}

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const READY_TIMEOUT_MS = 90_000;
/** The child's own shutdown deadline for active jobs, below the bench's kill timeout. */
const CHILD_SHUTDOWN_DEADLINE_S = 10;

/** A port free now on loopback (the OS picks it; a worker binds it a few seconds later). */
async function freePort(taken: ReadonlySet<number>): Promise<number> {
  for (;;) {
    const port = await anyFreePort();
    if (!taken.has(port)) return port;
  }
}

async function anyFreePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Polls the worker's /readyz until it answers 200 (Postgres, Redis, migrations and its queue workers). */
async function waitReady(port: number, child: ChildProcess, log: string): Promise<void> {
  const until = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < until) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`worker on port ${port} exited before it was ready (see ${log})`);
    try {
      const answer = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(5_000) });
      if (answer.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await sleep(250);
  }
  throw new Error(`worker on port ${port} not ready within ${READY_TIMEOUT_MS / 1000} s (see ${log})`);
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** SIGTERM, await the exit; SIGKILL if it has not exited within `timeoutMs`. */
async function stopChild(child: ChildProcess, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const done = await Promise.race([exited(child).then(() => true), sleep(timeoutMs).then(() => false)]);
  if (!done) {
    child.kill('SIGKILL');
    await exited(child);
  }
}

/**
 * `count` workers, each `node --import tsx src/cli/main.ts worker` with `env` as its whole
 * environment (plus PATH and HOME) and a health port of its own; stdout and stderr go to
 * `.bench/full-world-worker-<i>.log`. Resolves once every one answers /readyz 200.
 */
export async function startChildWorkers(
  env: Record<string, string>,
  count: number,
): Promise<MeasuredWorkers> {
  const logDir = join(REPO_ROOT, '.bench');
  mkdirSync(logDir, { recursive: true });
  const children: Array<{ child: ChildProcess; exit?: ChildExit }> = [];
  const logs: string[] = [];
  const ports = new Set<number>();
  let stopping = false;
  // A bench that dies without its finally (an uncaught error) must not leave workers behind.
  const killAll = () => children.forEach(({ child }) => child.kill('SIGKILL'));
  process.once('exit', killAll);
  const workers: MeasuredWorkers = {
    mode: 'child-process',
    logs,
    async stop(timeoutMs) {
      stopping = true;
      await Promise.all(children.map(({ child }) => stopChild(child, timeoutMs)));
      process.off('exit', killAll);
    },
    exits: () => children.flatMap(({ exit }) => (exit === undefined ? [] : [exit])),
  };
  try {
    const ready: Array<Promise<void>> = [];
    for (let i = 0; i < count; i++) {
      const port = await freePort(ports);
      ports.add(port);
      const log = join(logDir, `full-world-worker-${i + 1}.log`);
      const fd = openSync(log, 'w');
      const childEnv = {
        ...env,
        HTTP_PORT: String(port),
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
      };
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          'src/cli/main.ts',
          'worker',
          '--shutdown-deadline',
          String(CHILD_SHUTDOWN_DEADLINE_S),
        ],
        { cwd: REPO_ROOT, env: childEnv, stdio: ['ignore', fd, fd] },
      );
      closeSync(fd); // the child holds its own copy
      const entry: { child: ChildProcess; exit?: ChildExit } = { child };
      child.once('exit', (code, signal) => {
        entry.exit = { worker: i + 1, code, signal, early: !stopping };
      });
      children.push(entry);
      logs.push(log);
      ready.push(waitReady(port, child, log));
    }
    await Promise.all(ready);
    return workers;
  } catch (error) {
    await workers.stop(5_000);
    throw error;
  }
}

/** `count` workers in this process (`startWorker` with JOB_SET), as the bench ran them before. */
export async function startInProcessWorkers(
  env: Record<string, string>,
  count: number,
  logger: Logger,
): Promise<MeasuredWorkers> {
  const config = loadConfig(env);
  const running: RunningWorker[] = [];
  try {
    for (let i = 0; i < count; i++) running.push(await startWorker({ config, logger, jobs: JOB_SET }));
  } catch (error) {
    await Promise.all(running.map((worker) => worker.stop(5_000)));
    throw error;
  }
  return {
    mode: 'in-process',
    logs: [],
    stop: async (timeoutMs) => {
      await Promise.all(running.splice(0).map((worker) => worker.stop(timeoutMs)));
    },
    exits: () => [],
  };
}
