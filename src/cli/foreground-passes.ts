import type { Config } from '../config/config.js';
import type { PassResult } from '../streams/passes.js';
import { streamEnabled } from '../streams/registry.js';
import { type StreamName } from '../sync/stream-facts.js';
import { stripControlCharacters } from '../terminal-text.js';
import type { CliContext } from './context.js';
import { CliExit, ExitCode } from './exit-codes.js';

// The foreground loop `run` and `resync` share: one pass per stream in order, a line each, the
// OAuth streams skipped without OAuth, and the whole run stopped by a pause the partner API asked
// every client to keep (the next stream would only meet it too).

export interface ForegroundOutcome {
  /** Streams that left data behind (failed, partial, not run), in order. */
  left: StreamName[];
  /** The error that stopped every further stream, if one did. */
  stoppedBy: Error | undefined;
}

export async function runPassesInForeground(input: {
  context: CliContext;
  config: Config;
  streams: readonly StreamName[];
  signal: AbortSignal;
  runOne(stream: StreamName): Promise<PassResult>;
  /** Whether a pass that returned left data behind (the exit code must say so). */
  leftBehind(result: PassResult): boolean;
  /** Before a pass's result line is printed (e.g. to close its progress bar). */
  beforeLine?: () => void;
  stopsThePass(error: unknown): error is Error;
}): Promise<ForegroundOutcome> {
  const { context, streams } = input;
  const left: StreamName[] = [];
  let stoppedBy: Error | undefined;
  for (const stream of streams) {
    if (stoppedBy !== undefined) {
      context.stdout.write(formatLine(stream, 'not run', 'the partner API asked every client to wait'));
      left.push(stream);
      continue;
    }
    if (!streamEnabled(input.config, stream)) {
      context.stdout.write(formatLine(stream, 'skipped', 'OAuth is not configured (SVC_OAUTH_CLIENT_ID, …)'));
      continue;
    }
    let result: PassResult;
    try {
      result = await input.runOne(stream);
    } catch (error) {
      input.beforeLine?.();
      left.push(stream);
      context.stdout.write(
        formatLine(stream, 'failed', error instanceof Error ? error.message : String(error)),
      );
      if (input.signal.aborted) break;
      if (input.stopsThePass(error)) stoppedBy = error;
      continue;
    }
    input.beforeLine?.();
    context.stdout.write(formatResult(result));
    for (const problem of 'problems' in result ? (result.problems ?? []) : []) {
      context.stdout.write(`${''.padEnd(16)}   ${stripControlCharacters(problem)}\n`);
    }
    if (input.leftBehind(result)) left.push(stream);
  }
  return { left, stoppedBy };
}

/** Exit 1 saying why every further stream was stopped, if one was. */
export function exitIfStopped(stoppedBy: Error | undefined): void {
  if (stoppedBy === undefined) return;
  throw new CliExit(
    ExitCode.failed,
    /RETRY_AFTER_MAX/.test(stoppedBy.message)
      ? 'stopped: the partner API asked for a wait longer than RETRY_AFTER_MAX; run again later (or raise RETRY_AFTER_MAX)'
      : 'stopped: every process is paused after a 429 for longer than a request may wait; run again later',
  );
}

export function formatLine(stream: string, status: string, text: string): string {
  return `${stream.padEnd(16)} ${status.padEnd(10)} ${text}\n`;
}

export function formatResult(result: PassResult): string {
  if (!('runId' in result)) return formatLine(result.stream, result.status, result.reason);
  const details = Object.entries(result.details ?? {})
    .filter(([, value]) => value !== undefined && value !== null && typeof value !== 'object')
    .map(([key, value]) => `${key}=${String(value)}`)
    .join(' ');
  const summary = `${result.rows.toLocaleString('en-US')} rows, ${(result.requests ?? 0).toLocaleString('en-US')} requests`;
  return formatLine(
    result.stream,
    result.status,
    `${summary}${details === '' ? '' : `  (${details})`}${result.error ? `  ${result.error}` : ''}`,
  );
}
