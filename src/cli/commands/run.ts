import { Command } from 'commander';
import { ConfigError, requireApiBaseUrl, requireApiKey } from '../../config.js';
import { STREAM_NAMES, isStreamName, streamEnabled, type StreamName } from '../../streams/registry.js';
import type { PassResult } from '../../streams/passes.js';
import type { CliContext } from '../context.js';
import { openMigratedRuntime } from '../warehouse-ready.js';
import { CliExit, ExitCode } from '../exit-codes.js';
import { onInterrupt } from '../interrupt.js';
import { stripControlCharacters } from '../../terminal-text.js';

export function runCommand(context: CliContext): Command {
  return new Command('run')
    .argument('<stream...>', `${STREAM_NAMES.join(', ')}, or all`)
    .description(
      'one full pass of the named streams in the foreground, then exit; shares rate limit, locks and checkpoints with running workers',
    )
    .action(async (names: string[]) => {
      const { runStreamPass } = await import('../../streams/passes.js');
      const { stopsThePass } = await import('../../streams/pass-stop.js');
      const explicit = names.includes('all') ? null : names;
      const streams = expandStreams(names);
      const config = context.config();
      requireApiBaseUrl(config);
      requireApiKey(config);
      const needOAuth = expandStreams(explicit ?? []).filter((stream) => !streamEnabled(config, stream));
      if (needOAuth.length > 0) {
        throw new ConfigError(
          'SVC_OAUTH_CLIENT_ID',
          `required for ${needOAuth.join(', ')} (with SVC_OAUTH_CLIENT_SECRET and TOKEN_ENCRYPTION_KEY)`,
        );
      }
      const logger = context.logger();
      const runtime = await openMigratedRuntime(config, logger, 'rewards-etl run');
      const controller = new AbortController();
      const detach = onInterrupt(() => controller.abort(new Error('interrupted')));
      let failed = 0;
      let stoppedBy: Error | undefined;
      try {
        for (const stream of streams) {
          if (stoppedBy !== undefined) {
            context.stdout.write(formatLine(stream, 'not run', 'the partner API asked every client to wait'));
            continue;
          }
          if (!streamEnabled(config, stream)) {
            context.stdout.write(
              formatLine(stream, 'skipped', 'OAuth is not configured (SVC_OAUTH_CLIENT_ID, …)'),
            );
            continue;
          }
          let result: PassResult;
          try {
            result = await runStreamPass({ ...runtime.deps, signal: controller.signal }, stream);
          } catch (error) {
            failed++;
            context.stdout.write(
              formatLine(stream, 'failed', error instanceof Error ? error.message : String(error)),
            );
            if (controller.signal.aborted) break;
            // The next stream would only meet the same pause: the whole run stops here.
            if (stopsThePass(error)) stoppedBy = error;
            continue;
          }
          // Partial is a failure here: a cron job or an alert on the exit code must see data left behind.
          if (result.status === 'failed' || result.status === 'partial') failed++;
          context.stdout.write(formatResult(result));
          for (const problem of 'problems' in result ? (result.problems ?? []) : []) {
            context.stdout.write(`${''.padEnd(16)}   ${stripControlCharacters(problem)}\n`);
          }
        }
      } finally {
        detach();
        await runtime.close();
      }
      if (stoppedBy !== undefined) {
        throw new CliExit(
          ExitCode.failed,
          /RETRY_AFTER_MAX/.test(stoppedBy.message)
            ? 'stopped: the partner API asked for a wait longer than RETRY_AFTER_MAX; run again later (or raise RETRY_AFTER_MAX)'
            : 'stopped: every process is paused after a 429 for longer than a request may wait; run again later',
        );
      }
      if (failed > 0) {
        throw new CliExit(ExitCode.failed, `${failed} stream(s) failed or left work undone (see above)`);
      }
    });
}

export function expandStreams(names: readonly string[]): StreamName[] {
  const out: StreamName[] = [];
  for (const name of names) {
    if (name === 'all') out.push(...STREAM_NAMES);
    else if (isStreamName(name)) out.push(name);
    else
      throw new CliExit(ExitCode.usage, `unknown stream "${name}"; streams: ${STREAM_NAMES.join(', ')}, all`);
  }
  return [...new Set(out)];
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
