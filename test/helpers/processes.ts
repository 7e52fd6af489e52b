import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository root: CLI processes run from here so `tsx` and `src/cli/main.ts` resolve. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ExitResult {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface CliRun extends ExitResult {
  stdout: string;
  stderr: string;
}

/** One line of a process's pino output (JSON), or `{ msg: line }` for a line that is not JSON. */
export type LogLine = Record<string, unknown> & { msg?: string };

export interface SpawnedProcess {
  readonly label: string;
  readonly child: ChildProcess;
  /** Settles when the process has exited; never rejects. */
  readonly exited: Promise<ExitResult>;
  stdout(): string;
  stderr(): string;
  /** stderr parsed line by line (pino writes JSON lines to stderr). */
  logLines(): LogLine[];
  /** Resolves with the first log line (already written or still to come) that matches; rejects on exit or timeout. */
  waitForLog(match: string | ((line: LogLine) => boolean), timeoutMs?: number): Promise<LogLine>;
  /** Resolves when the process has exited (at once if it already has). */
  waitForExit(timeoutMs?: number): Promise<ExitResult>;
  /** Sends a signal; a no-op once the process has exited. */
  kill(signal?: NodeJS.Signals): void;
  /** Sends `signal`, then SIGKILL if the process is still alive after `graceMs`; resolves with how it ended. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<ExitResult>;
}

export interface SpawnOptions {
  /** Variables on top of a minimal base (PATH, HOME): the parent's environment is not inherited, so a
   * stray DATABASE_URL or REDIS_PREFIX of the test runner cannot leak into the child. */
  env: Record<string, string>;
  label?: string;
  cwd?: string;
  /** Written to the process's standard input, then end of input (stdin is closed when absent). */
  input?: string;
  /** Keep standard input open for the test to write to (`child.stdin`). */
  openStdin?: boolean;
}

/**
 * Spawns and tracks child processes for one test file. `cleanup()` (call it in `afterAll`) SIGKILLs
 * whatever is still running, so a failed assertion never leaves a worker behind.
 */
export interface ProcessPool {
  /** `node --import tsx src/cli/main.ts …args`, i.e. `rewards-etl …args` from source. */
  spawnCli(args: readonly string[], options: SpawnOptions): SpawnedProcess;
  spawn(command: string, args: readonly string[], options: SpawnOptions): SpawnedProcess;
  /** Runs a CLI command to completion; SIGKILLs it after `timeoutMs`. */
  runCli(args: readonly string[], options: SpawnOptions & { timeoutMs?: number }): Promise<CliRun>;
  cleanup(): Promise<void>;
}

export function createProcessPool(): ProcessPool {
  const live = new Set<SpawnedProcess>();
  const pool: ProcessPool = {
    spawnCli: (args, options) =>
      pool.spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
        ...options,
        label: options.label ?? args[0] ?? 'cli',
      }),
    spawn(command, args, options) {
      const spawned = spawnTracked(command, args, options);
      live.add(spawned);
      void spawned.exited.then(() => live.delete(spawned));
      return spawned;
    },
    async runCli(args, options) {
      const spawned = pool.spawnCli(args, options);
      const timeoutMs = options.timeoutMs ?? 60_000;
      let exit: ExitResult;
      try {
        exit = await spawned.waitForExit(timeoutMs);
      } catch (error) {
        await spawned.stop('SIGKILL');
        throw new Error(
          `${spawned.label} did not exit within ${timeoutMs} ms\nstderr:\n${tail(spawned.stderr())}`,
          { cause: error },
        );
      }
      return { ...exit, stdout: spawned.stdout(), stderr: spawned.stderr() };
    },
    async cleanup() {
      await Promise.all([...live].map((spawned) => spawned.stop('SIGKILL', 5_000)));
    },
  };
  return pool;
}

function spawnTracked(command: string, args: readonly string[], options: SpawnOptions): SpawnedProcess {
  const label = options.label ?? command;
  const child = spawn(command, [...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...options.env },
    stdio: [options.input === undefined && options.openStdin !== true ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (options.input !== undefined) child.stdin?.end(options.input);
  let out = '';
  let err = '';
  const lines: LogLine[] = [];
  let partial = '';
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const listener of [...listeners]) listener();
  };
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    notify();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const text of parts) if (text.trim() !== '') lines.push(parseLine(text));
    notify();
  });
  let exitResult: ExitResult | undefined;
  const exited = new Promise<ExitResult>((resolve) => {
    // 'close', not 'exit': by then every byte of stdout/stderr has been read.
    child.once('close', (code, signal) => {
      if (partial.trim() !== '') lines.push(parseLine(partial));
      partial = '';
      exitResult = { code, signal };
      resolve(exitResult);
      notify();
    });
    child.once('error', (error) => {
      err += `\nspawn error: ${error.message}\n`;
      exitResult = { code: null, signal: null };
      resolve(exitResult);
      notify();
    });
  });

  const withTimeout = <T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${label}: ${what} not within ${timeoutMs} ms\nstderr:\n${tail(err)}`)),
        timeoutMs,
      );
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  };

  const spawned: SpawnedProcess = {
    label,
    child,
    exited,
    stdout: () => out,
    stderr: () => err,
    logLines: () => [...lines],
    waitForLog(match, timeoutMs = 30_000) {
      const test = typeof match === 'string' ? (line: LogLine) => line.msg === match : match;
      const found = new Promise<LogLine>((resolve, reject) => {
        const check = () => {
          const line = lines.find(test);
          if (line !== undefined) {
            listeners.delete(check);
            resolve(line);
          } else if (exitResult !== undefined) {
            listeners.delete(check);
            reject(
              new Error(
                `${label} exited (${JSON.stringify(exitResult)}) before logging the line\nstderr:\n${tail(err)}`,
              ),
            );
          }
        };
        listeners.add(check);
        check();
      });
      return withTimeout(
        found,
        timeoutMs,
        `log line ${typeof match === 'string' ? JSON.stringify(match) : '(predicate)'}`,
      );
    },
    waitForExit: (timeoutMs = 60_000) => withTimeout(exited, timeoutMs, 'exit'),
    kill(signal = 'SIGTERM') {
      if (exitResult === undefined && child.exitCode === null && child.signalCode === null)
        child.kill(signal);
    },
    async stop(signal = 'SIGTERM', graceMs = 30_000) {
      spawned.kill(signal);
      try {
        return await spawned.waitForExit(graceMs);
      } catch {
        spawned.kill('SIGKILL');
        return exited;
      }
    },
  };
  return spawned;
}

function parseLine(text: string): LogLine {
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as LogLine;
  } catch {
    // Not JSON (a stack trace, a tsx warning): keep it as text.
  }
  return { msg: text };
}

function tail(text: string, lines = 40): string {
  return text.split('\n').slice(-lines).join('\n');
}
