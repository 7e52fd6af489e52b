import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';

const ROOT = new URL('../../../', import.meta.url).pathname;
/** Every chaos process writes its stdout and stderr here; secrets.test.ts scans the whole directory. */
export const CHAOS_LOG_DIR = join(ROOT, 'test-artifacts', 'chaos-logs');

export interface CliProcess {
  name: string;
  child: ChildProcess;
  logPath: string;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stdout(): string;
  stderr(): string;
}

/** Starts `rewards-etl <args>` the way an operator would (tsx, cwd at the repo root); output goes to a log file too. */
export function startCli(name: string, args: string[], env: Record<string, string>): CliProcess {
  mkdirSync(CHAOS_LOG_DIR, { recursive: true });
  const logPath = join(CHAOS_LOG_DIR, `${name}.log`);
  const log: WriteStream = createWriteStream(logPath, { flags: 'a' });
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: string[] = [];
  const err: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    out.push(chunk.toString('utf8'));
    log.write(chunk);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err.push(chunk.toString('utf8'));
    log.write(chunk);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => {
      log.end();
      resolve({ code, signal });
    });
  });
  return { name, child, logPath, exited, stdout: () => out.join(''), stderr: () => err.join('') };
}

/** Runs a command to its end. */
export async function runCli(
  name: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = startCli(name, args, env);
  const { code } = await proc.exited;
  return { code, stdout: proc.stdout(), stderr: proc.stderr() };
}

/** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
export async function stopCli(proc: CliProcess, graceMs = 20_000): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), graceMs);
  await proc.exited;
  clearTimeout(timer);
}

export function isAlive(proc: CliProcess): boolean {
  return proc.child.exitCode === null && proc.child.signalCode === null;
}
