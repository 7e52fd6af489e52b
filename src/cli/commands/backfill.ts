import { Command } from 'commander';
import { requireApiBaseUrl, requireApiKey } from '../../config.js';
import type { CliContext } from '../context.js';
import { openMigratedRuntime } from '../warehouse-ready.js';
import { CliExit, ExitCode } from '../exit-codes.js';
import { onInterrupt } from '../interrupt.js';
import { parseInstant } from '../parse-instant.js';
import { summarizeProgress, type BackfillProgress } from './backfill-progress.js';

export function backfillCommand(context: CliContext): Command {
  return new Command('backfill')
    .description('plan and enqueue check-in windows for a historical range; workers page them')
    .requiredOption('--from <iso>', 'start of the range (inclusive), ISO 8601')
    .option('--to <iso>', 'end of the range (exclusive), ISO 8601; default now minus CHECKINS_SAFETY_LAG')
    .option('--wait', 'show progress until every window of the range is done')
    .action(async (options: { from: string; to?: string; wait?: boolean }) => {
      const { QUEUES } = await import('../../worker/queues.js');
      const { enqueueWindows } = await import('../../../jobs/checkins-window.js');
      const { planCheckinWindows } = await import('../../streams/checkins/plan.js');
      const { windowsToPage } = await import('../../streams/checkins/windows-to-page.js');
      const { windowsInRange } = await import('../../warehouse/sync-windows.js');
      const { createQueues } = await import('../../worker/worker.js');
      const from = parseInstant('--from', options.from);
      const config = context.config();
      requireApiBaseUrl(config);
      requireApiKey(config);
      const logger = context.logger();
      const runtime = await openMigratedRuntime(config, logger, 'rewards-etl backfill');
      const queues = createQueues(config, runtime.redis);
      const windowQueue = queues.get(QUEUES.checkinsWindow);
      try {
        const now = runtime.deps.clock.now();
        const latest = new Date(now.getTime() - config.checkins.safetyLagMs);
        const to = options.to === undefined ? latest : parseInstant('--to', options.to);
        if (to > latest)
          throw new CliExit(
            ExitCode.usage,
            `--to must be at or before now minus CHECKINS_SAFETY_LAG (${latest.toISOString()})`,
          );
        if (from >= to) throw new CliExit(ExitCode.usage, '--from must be before --to');
        let plan = await planCheckinWindows(runtime.deps, { from, to });
        // A worker's planner holds the planner lease for a moment each tick: wait for it.
        for (let tries = 0; plan.busy && tries < 120; tries++) {
          await new Promise((resolve) => setTimeout(resolve, 500));
          plan = await planCheckinWindows(runtime.deps, { from, to });
        }
        if (plan.busy) {
          throw new CliExit(
            ExitCode.failed,
            'another process held the check-in planner lease for a minute: try again',
          );
        }
        const due = (await windowsToPage(runtime.db)).filter(
          (row) => row.window_start >= from && row.window_end <= to,
        );
        const enqueued = windowQueue === undefined ? 0 : await enqueueWindows(windowQueue, due);
        context.stdout.write(
          `planned ${plan.planned} new window(s) in ${from.toISOString()} .. ${to.toISOString()}; enqueued ${enqueued} for the workers\n`,
        );
        if (options.wait !== true) return;
        if (windowQueue !== undefined && (await windowQueue.getWorkersCount()) === 0) {
          context.stderr.write(
            'no worker is running on this Redis yet: start `rewards-etl worker` (waiting)\n',
          );
        }
        await waitForRange(context, async () =>
          summarizeProgress(await windowsInRange(runtime.db, { from, to })),
        );
      } finally {
        await Promise.all([...queues.values()].map((queue) => queue.close()));
        await runtime.close();
      }
    });
}

async function waitForRange(context: CliContext, read: () => Promise<BackfillProgress>): Promise<void> {
  const { SingleBar, Presets } = await import('cli-progress');
  const tty = (context.stdout as NodeJS.WriteStream).isTTY === true;
  const startedAt = Date.now();
  const startRows = (await read()).rows;
  let interrupted = false;
  const detach = onInterrupt(() => {
    interrupted = true;
  });
  const bar = tty
    ? new SingleBar(
        {
          format:
            'windows {bar} {value}/{total} | {rows} rows | {rate} rows/s | ETA {eta_formatted} | failed {failed}',
          hideCursor: true,
        },
        Presets.shades_classic,
      )
    : undefined;
  let lastLog = 0;
  try {
    for (;;) {
      const progress = await read();
      const elapsed = (Date.now() - startedAt) / 1000;
      const rate = elapsed > 0 ? (progress.rows - startRows) / elapsed : 0;
      const payload = {
        rows: progress.rows.toLocaleString('en-US'),
        rate: rate.toFixed(0),
        failed: progress.failed,
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
      if (progress.done || interrupted) break;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  } finally {
    bar?.stop();
    detach();
  }
  const final = await read();
  context.stdout.write(
    `backfill ${final.done ? 'done' : 'still running (interrupted)'}: ${final.complete}/${final.windows} windows, ${final.rows} rows, ${final.failed} failed\n`,
  );
  if (final.failed > 0)
    throw new CliExit(ExitCode.failed, `${final.failed} window(s) failed; see rewards-etl status`);
}
