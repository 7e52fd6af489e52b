import { Command } from 'commander';
import { requireApiBaseUrl, requireApiKey } from '../../config/config.js';
import type { CliContext } from '../context.js';
import { openMigratedRuntime } from '../warehouse-ready.js';
import { CliExit, ExitCode } from '../exit-codes.js';
import { onInterrupt } from '../interrupt.js';
import { parseInstant } from '../parse-instant.js';
import { formatEta } from '../terminal.js';
import { summarizeProgress, type BackfillProgress } from './backfill-progress.js';

export function backfillCommand(context: CliContext): Command {
  return new Command('backfill')
    .description('plan and enqueue check-in windows for a historical range; workers page them')
    .requiredOption('--from <iso>', 'start of the range (inclusive), ISO 8601')
    .option('--to <iso>', 'end of the range (exclusive), ISO 8601; default now minus CHECKINS_SAFETY_LAG')
    .option('--wait', 'show progress until every window of the range is done')
    .action((options: BackfillOptions) => backfill(context, options));
}

interface BackfillOptions {
  from: string;
  to?: string;
  wait?: boolean;
}

type Runtime = Awaited<ReturnType<typeof openMigratedRuntime>>;

/** Plans the range's windows, queues the ones to page for the workers, and waits if asked. */
async function backfill(context: CliContext, options: BackfillOptions): Promise<void> {
  const from = parseInstant('--from', options.from);
  const config = context.config();
  requireApiBaseUrl(config);
  requireApiKey(config);
  const runtime = await openMigratedRuntime(config, context.logger(), 'rewards-etl backfill');
  try {
    const to = rangeEnd(runtime, from, options.to);
    const planned = await planRange(runtime, from, to);
    const { windowsToPage } = await import('../../streams/checkins/windows-to-page.js');
    const { enqueueWindowsFor } = await import('../window-queue.js');
    const due = (await windowsToPage(runtime.db)).filter(
      (row) => row.window_start >= from && row.window_end <= to,
    );
    const enqueued = await enqueueWindowsFor(config, runtime.redis, due);
    context.stdout.write(
      `planned ${planned} new window(s) in ${from.toISOString()} .. ${to.toISOString()}; enqueued ${enqueued} for the workers\n`,
    );
    if (options.wait !== true) return;
    const controller = new AbortController();
    const paging = (await anyWindowWorker(runtime))
      ? undefined
      : pageHere(context, { ...runtime.deps, signal: controller.signal }, { from, to });
    const { windowsInRange } = await import('../../streams/checkins/window-lifecycle.js');
    try {
      await waitForRange(
        context,
        async () => summarizeProgress(await windowsInRange(runtime.db, { from, to })),
        {
          finished: () => paging?.settled === true,
          interrupted: () => controller.abort(new Error('interrupted')),
        },
      );
    } finally {
      controller.abort(new Error('backfill ended'));
      await paging?.done;
    }
  } finally {
    await runtime.close();
  }
}

/**
 * No worker takes the windows (README's order runs `backfill --wait` before `worker`): page them in
 * this process, saying so, rather than wait for ever. A worker started meanwhile shares the work.
 */
function pageHere(
  context: CliContext,
  deps: Runtime['deps'],
  range: { from: Date; to: Date },
): { done: Promise<void>; settled: boolean } {
  context.stderr.write(
    'no worker is running on this Redis: paging the range in this process (a worker started meanwhile shares the windows)\n',
  );
  const state = { settled: false, done: Promise.resolve() };
  state.done = (async () => {
    try {
      const { pageRangeHere } = await import('../../streams/checkins/page-range.js');
      await pageRangeHere(deps, range);
    } finally {
      state.settled = true;
    }
  })();
  // Its error (a pause the API asked for, say) is thrown by `await paging.done` once waiting ends.
  state.done.catch(() => undefined);
  return state;
}

/** `--to`, or now minus CHECKINS_SAFETY_LAG: never a range the feed may still add to. */
function rangeEnd(runtime: Runtime, from: Date, toOption: string | undefined): Date {
  const latest = new Date(runtime.deps.clock.now().getTime() - runtime.deps.config.checkins.safetyLagMs);
  const to = toOption === undefined ? latest : parseInstant('--to', toOption);
  if (to > latest) {
    throw new CliExit(
      ExitCode.usage,
      `--to must be at or before now minus CHECKINS_SAFETY_LAG (${latest.toISOString()})`,
    );
  }
  if (from >= to) throw new CliExit(ExitCode.usage, '--from must be before --to');
  return to;
}

/** New windows planned; a worker's planner holds the planner lease for a moment each tick: wait for it. */
async function planRange(runtime: Runtime, from: Date, to: Date): Promise<number> {
  const { planWhenPlannerFree } = await import('../../streams/checkins/plan.js');
  const plan = await planWhenPlannerFree(runtime.deps, { from, to });
  if (plan.busy) {
    throw new CliExit(
      ExitCode.failed,
      'another process held the check-in planner lease for a minute: try again',
    );
  }
  return plan.planned;
}

async function anyWindowWorker(runtime: Runtime): Promise<boolean> {
  const { QUEUES } = await import('../../worker/queues.js');
  const { createQueue } = await import('../../worker/queue-setup.js');
  // Issue 38: the workers' heartbeat records first. Right after a failover a worker may not have
  // reconnected yet, so CLIENT LIST on the new primary does not show it (and on a Cluster, a node
  // that just died fails CLIENT LIST outright): paging here then raced the worker for its windows.
  const { readWorkers } = await import('../../status/queue-depths.js');
  const records = await readWorkers(runtime.redis, runtime.deps.config.redisPrefix, Date.now());
  if (records.available && records.live.length > 0) return true;
  const queue = createQueue(runtime.deps.config, runtime.redis, QUEUES.checkinsWindow);
  try {
    const { throughFailover } = await import('../../redis/through-failover.js');
    return (await throughFailover(() => queue.getWorkersCount())) > 0;
  } finally {
    await queue.close();
  }
}

/** The bar on a terminal: cli-progress's own ETA printed `NFs` before anything moved; ours says `—`. */
async function windowsBar(context: CliContext) {
  const { SingleBar, Presets } = await import('cli-progress');
  return new SingleBar(
    {
      format: 'windows {bar} {value}/{total} | {rows} rows | {rate} rows/s | ETA {eta} | failed {failed}',
      hideCursor: true,
      stream: context.stderr,
      // Redrawn after a log line cleared it, even when nothing changed.
      forceRedraw: true,
    },
    Presets.shades_classic,
  );
}

async function waitForRange(
  context: CliContext,
  read: () => Promise<BackfillProgress>,
  /** `finished`: this process's own paging is over (nothing more will move without a worker). */
  hooks: { finished: () => boolean; interrupted: () => void },
): Promise<void> {
  const tty = (context.stdout as NodeJS.WriteStream).isTTY === true;
  const startedAt = Date.now();
  const startRows = (await read()).rows;
  let interrupted = false;
  const detach = onInterrupt(() => {
    interrupted = true;
    hooks.interrupted();
  });
  const bar = tty ? await windowsBar(context) : undefined;
  let lastLog = 0;
  let startComplete: number | undefined;
  // Logs print above the bar, not inside its line.
  const detachBar = bar === undefined ? undefined : context.terminal?.showingBar(() => bar.render());
  try {
    for (;;) {
      const progress = await read();
      const elapsed = (Date.now() - startedAt) / 1000;
      const rate = elapsed > 0 ? (progress.rows - startRows) / elapsed : 0;
      startComplete ??= progress.complete;
      const payload = {
        rows: progress.rows.toLocaleString('en-US'),
        rate: rate.toFixed(0),
        failed: progress.failed,
        eta: formatEta({
          done: progress.complete,
          total: progress.windows,
          startDone: startComplete,
          elapsedMs: elapsed * 1000,
        }),
      };
      if (bar !== undefined) {
        if (bar.getTotal() !== progress.windows) bar.start(progress.windows, progress.complete, payload);
        bar.update(progress.complete, payload);
      } else if (Date.now() - lastLog >= 10_000 || progress.done) {
        lastLog = Date.now();
        const eta =
          rate > 0 && progress.expectedRows !== null
            ? Math.max(0, (progress.expectedRows - progress.rows) / rate)
            : null;
        context.stdout.write(
          `backfill: ${progress.complete}/${progress.windows} windows, ${progress.rows} rows` +
            `${progress.expectedRows === null ? '' : ` of ~${progress.expectedRows}`}, ${rate.toFixed(0)} rows/s` +
            `${eta === null ? '' : `, ETA ${Math.round(eta)} s`}, ${progress.failed} failed\n`,
        );
      }
      if (progress.done || interrupted || hooks.finished()) break;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  } finally {
    detachBar?.();
    bar?.stop();
    detach();
  }
  reportEnd(context, await read(), interrupted);
}

/** The last line; exit 1 when windows failed, or when paging here ended with windows not complete. */
function reportEnd(context: CliContext, final: BackfillProgress, interrupted: boolean): void {
  const state = final.done ? 'done' : interrupted ? 'still running (interrupted)' : 'stopped';
  context.stdout.write(
    `backfill ${state}: ${final.complete}/${final.windows} windows, ${final.rows} rows, ${final.failed} failed\n`,
  );
  if (final.failed > 0)
    throw new CliExit(ExitCode.failed, `${final.failed} window(s) failed; see rewards-etl status`);
  if (state === 'stopped') {
    throw new CliExit(
      ExitCode.failed,
      `${final.windows - final.complete} window(s) not complete after paging them here; a worker retries them (see rewards-etl status)`,
    );
  }
}
