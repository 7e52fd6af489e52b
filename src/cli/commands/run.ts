import { Command } from 'commander';
import { requireApiBaseUrl, requireApiKey } from '../../config/config.js';
import { ConfigError } from '../../config/config-error.js';
import { streamEnabled } from '../../streams/registry.js';
import { STREAM_NAMES, isStreamName, type StreamName } from '../../sync/stream-facts.js';
import type { CliContext } from '../context.js';
import { openMigratedRuntime } from '../warehouse-ready.js';
import { CliExit, ExitCode } from '../exit-codes.js';
import { exitIfStopped, runPassesInForeground } from '../foreground-passes.js';
import { onInterrupt } from '../interrupt.js';

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
      try {
        const { left, stoppedBy } = await runPassesInForeground({
          context,
          config,
          streams,
          signal: controller.signal,
          runOne: (stream) => runStreamPass({ ...runtime.deps, signal: controller.signal }, stream),
          // Partial is a failure here: a cron job or an alert on the exit code must see data left behind.
          leftBehind: (result) => result.status === 'failed' || result.status === 'partial',
          stopsThePass,
        });
        exitIfStopped(stoppedBy);
        if (left.length > 0) {
          throw new CliExit(
            ExitCode.failed,
            `${left.length} stream(s) failed or left work undone (see above)`,
          );
        }
      } finally {
        detach();
        await runtime.close();
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
