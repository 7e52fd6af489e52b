import { Command } from 'commander';
import { requireApiBaseUrl, requireApiKey } from '../../config/config.js';
import { ConfigError } from '../../config/config-error.js';
import { streamEnabled } from '../../streams/registry.js';
import { STREAM_NAMES, type StreamName } from '../../sync/stream-facts.js';
import type { ResyncProgressUpdate, ResyncRange } from '../../sync/resync-plan.js';
import { formatEta } from '../terminal.js';
import { stripControlCharacters } from '../../terminal-text.js';
import type { CliContext } from '../context.js';
import { CliExit, ExitCode } from '../exit-codes.js';
import { onInterrupt } from '../interrupt.js';
import { parseInstant } from '../parse-instant.js';
import { openMigratedRuntime } from '../warehouse-ready.js';
import { expandStreams } from './run.js';
import { exitIfStopped, runPassesInForeground } from '../foreground-passes.js';

interface ResyncOptions {
  from?: string;
  to?: string;
  wait?: boolean;
}

/**
 * `rewards-etl resync <stream…>` (docs/resync.md): one pass per named stream, in the foreground,
 * that ignores the stream's short-cuts (check-in windows already complete, content hashes, the
 * locations budget, the members' incremental stop) and re-reads what the warehouse holds.
 */
export function resyncCommand(context: CliContext): Command {
  return (
    new Command('resync')
      // A usage error commander finds (no stream named) ends through runCli as exit 2, not commander's 1.
      .exitOverride()
      .argument('<stream...>', `${STREAM_NAMES.join(', ')}, or all (alerts has nothing to re-read)`)
      .description(
        're-read streams in the foreground ignoring every short-cut (complete windows, content hashes, budgets, incremental stops); shares rate limit and leases with running workers',
      )
      .option(
        '--from <iso>',
        'check-ins and payment intents: start of the range (inclusive, created_at), ISO 8601',
      )
      .option('--to <iso>', 'check-ins and payment intents: end of the range (exclusive), ISO 8601')
      .option(
        '--wait',
        'wait for work another process holds (a stream lease, a window being paged) instead of naming it as left behind',
      )
      .action((names: string[], options: ResyncOptions) => resync(context, names, options))
  );
}

/** Checks the streams, the range and the credentials, then re-syncs in the foreground. */
async function resync(context: CliContext, names: string[], options: ResyncOptions): Promise<void> {
  const streams = await resyncableStreams(names);
  const range = await rangeOf(options);
  const config = context.config();
  requireApiBaseUrl(config);
  requireApiKey(config);
  const explicit = names.includes('all') ? [] : names;
  const needOAuth = expandStreams(explicit).filter((stream) => !streamEnabled(config, stream));
  if (needOAuth.length > 0) {
    throw new ConfigError(
      'SVC_OAUTH_CLIENT_ID',
      `required for ${needOAuth.join(', ')} (with SVC_OAUTH_CLIENT_SECRET and TOKEN_ENCRYPTION_KEY)`,
    );
  }
  const runtime = await openMigratedRuntime(config, context.logger(), 'rewards-etl resync');
  const controller = new AbortController();
  const detach = onInterrupt(() => controller.abort(new Error('interrupted')));
  const progress = await progressDisplay(context);
  let outcome: { left: string[]; stoppedBy: Error | undefined };
  try {
    outcome = await resyncInForeground({
      context,
      runtime,
      streams,
      range,
      options,
      progress,
      signal: controller.signal,
    });
  } finally {
    progress.end();
    detach();
    await runtime.close();
  }
  if (controller.signal.aborted)
    throw new CliExit(ExitCode.failed, 'interrupted: the re-sync did not finish');
  exitIfStopped(outcome.stoppedBy);
  if (outcome.left.length > 0) {
    throw new CliExit(ExitCode.failed, `not fully re-synced: ${outcome.left.join(', ')} (see above)`);
  }
}

/** The named streams that can be re-synced; naming one that cannot (alerts) is a usage error. */
async function resyncableStreams(names: string[]): Promise<StreamName[]> {
  const { STREAMS } = await import('../../streams/registry.js');
  const explicit = names.includes('all') ? [] : names;
  return expandStreams(names).filter((stream) => {
    const definition = STREAMS[stream].resync;
    if (!('unsupported' in definition)) return true;
    if (explicit.includes(stream)) {
      throw new CliExit(ExitCode.usage, `cannot re-sync ${stream}: ${definition.unsupported}`);
    }
    return false;
  });
}

async function rangeOf(options: ResyncOptions): Promise<ResyncRange> {
  const range: ResyncRange = {
    from: options.from === undefined ? null : parseInstant('--from', options.from).getTime(),
    to: options.to === undefined ? null : parseInstant('--to', options.to).getTime(),
  };
  const { resyncRangeProblem } = await import('../../sync/resync-plan.js');
  const problem = resyncRangeProblem(range, null);
  if (problem !== null) throw new CliExit(ExitCode.usage, problem);
  return range;
}

async function resyncInForeground(input: {
  context: CliContext;
  runtime: Awaited<ReturnType<typeof openMigratedRuntime>>;
  streams: StreamName[];
  range: ResyncRange;
  options: ResyncOptions;
  progress: ProgressDisplay;
  signal: AbortSignal;
}): Promise<{ left: string[]; stoppedBy: Error | undefined }> {
  const { context, runtime, streams, range, progress, signal } = input;
  const config = runtime.deps.config;
  const { runResync } = await import('../../streams/resync.js');
  const { STREAMS } = await import('../../streams/registry.js');
  const { resyncRangeProblem } = await import('../../sync/resync-plan.js');
  const { stopsThePass } = await import('../../streams/pass-stop.js');
  if (streams.includes('checkins')) {
    const latestClosed = runtime.deps.clock.now().getTime() - config.checkins.safetyLagMs;
    const problem = resyncRangeProblem(range, latestClosed);
    if (problem !== null) throw new CliExit(ExitCode.usage, problem);
  }
  const ranged = streams.filter((stream) => {
    const definition = STREAMS[stream].resync;
    return !('unsupported' in definition) && definition.usesRange;
  });
  const whole = streams.filter((stream) => !ranged.includes(stream));
  if ((range.from !== null || range.to !== null) && whole.length > 0) {
    context.stdout.write(
      `note: --from/--to narrow ${ranged.join(', ') || 'no named stream'}; ${whole.join(', ')} ${whole.length === 1 ? 'is' : 'are'} read whole\n`,
    );
  }
  return runPassesInForeground({
    context,
    config,
    streams,
    signal,
    runOne: (stream) =>
      runResync({ ...runtime.deps, signal }, stream, {
        range,
        wait: input.options.wait === true,
        progress: (update) => progress.update(stream, update),
        onWaiting: (reason) => progress.waiting(stream, reason),
      }),
    // A stream not re-synced (busy, failed, partly done) is data left behind: exit 1 naming it.
    leftBehind: (result) => result.status !== 'succeeded',
    beforeLine: () => progress.end(),
    stopsThePass,
  });
}

interface ProgressDisplay {
  update(stream: StreamName, update: ResyncProgressUpdate): void;
  waiting(stream: StreamName, reason: string): void;
  end(): void;
}

/**
 * A progress bar per stream on a terminal (as `backfill --wait` shows), a line every 10 s
 * otherwise; streams that report no units show only their result line.
 */
async function progressDisplay(context: CliContext): Promise<ProgressDisplay> {
  const tty = (context.stdout as NodeJS.WriteStream).isTTY === true;
  const { SingleBar, Presets } = await import('cli-progress');
  let bar: InstanceType<typeof SingleBar> | undefined;
  let current: StreamName | undefined;
  let started = { at: 0, done: 0 };
  let detachBar: (() => void) | undefined;
  let lastLine = 0;
  let lastWaiting = 0;
  return {
    update(stream, { done, total, unit }) {
      if (!tty) {
        if (Date.now() - lastLine < 10_000 && done < total) return;
        lastLine = Date.now();
        context.stdout.write(`resync ${stream}: ${done}/${total} ${unit}\n`);
        return;
      }
      if (bar === undefined || current !== stream) {
        detachBar?.();
        bar?.stop();
        current = stream;
        started = { at: Date.now(), done };
        const shown = new SingleBar(
          {
            format: `${stream.padEnd(16)} {bar} {value}/{total} {unit} | ETA {eta}`,
            hideCursor: true,
            stream: context.stderr,
            // Redrawn after a log line cleared it, even when nothing changed.
            forceRedraw: true,
          },
          Presets.shades_classic,
        );
        bar = shown;
        shown.start(total, done, { unit, eta: '—' });
        // Logs print above the bar, not inside its line.
        detachBar = context.terminal?.showingBar(() => shown.render());
        return;
      }
      const eta = formatEta({ done, total, startDone: started.done, elapsedMs: Date.now() - started.at });
      bar.setTotal(total);
      bar.update(done, { unit, eta });
    },
    waiting(stream, reason) {
      if (Date.now() - lastWaiting < 30_000) return;
      lastWaiting = Date.now();
      context.stdout.write(`resync ${stream}: waiting: ${stripControlCharacters(reason)}\n`);
    },
    end() {
      detachBar?.();
      detachBar = undefined;
      bar?.stop();
      bar = undefined;
      current = undefined;
    },
  };
}
