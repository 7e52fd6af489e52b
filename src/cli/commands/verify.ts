import { Command } from 'commander';
import { requireApiBaseUrl, requireApiKey } from '../../config.js';
import type { CliContext } from '../context.js';
import { openMigratedRuntime } from '../warehouse-ready.js';
import { CliExit, ExitCode } from '../exit-codes.js';
import { parseInstant } from '../parse-instant.js';
import { stripControlCharacters } from '../../terminal-text.js';

interface VerifyRow {
  start: Date;
  end: Date;
  /** null: not probed, the window is not complete. */
  api: number | null;
  warehouse: number;
  rejected: number;
  /** 'ok', 'MISMATCH', or the state of a window that is not complete. */
  result: string;
  ok: boolean;
}

export function verifyCommand(context: CliContext): Command {
  return new Command('verify')
    .description(
      "for each check-in window, compare the warehouse count with the API's total_count (one page_size=1 probe per window); a window not complete (failed, pending, running) counts as not verified; exit 3 on any",
    )
    .option('--from <iso>', 'only windows starting at or after this instant')
    .option('--to <iso>', 'only windows ending at or before this instant')
    .option('--repair', 're-queue the windows that differ')
    .option('--all', 'print every window, not only mismatches')
    .action(async (options: { from?: string; to?: string; repair?: boolean; all?: boolean }) => {
      const { QUEUES } = await import('../../worker/queues.js');
      const { enqueueWindows } = await import('../../../jobs/checkins-window.js');
      const { probeWindow } = await import('../../streams/checkins/window-check.js');
      const { countWindowRows } = await import('../../warehouse/check-ins.js');
      const { loadWindow, markVerified, resetForRepage, windowOf, windowsInRange } =
        await import('../../warehouse/sync-windows.js');
      const { createQueues } = await import('../../worker/worker.js');
      const { compareRollupWithRows, rebuildRollupDays } = await import('../../warehouse/check-ins-daily.js');
      const { rollupDayRanges } = await import('../../sync/rollup-days.js');
      const { retentionCutoff } = await import('../../sync/retention.js');
      const config = context.config();
      const range = {
        ...(options.from === undefined ? {} : { from: parseInstant('--from', options.from) }),
        ...(options.to === undefined ? {} : { to: parseInstant('--to', options.to) }),
      };
      requireApiBaseUrl(config);
      requireApiKey(config);
      const runtime = await openMigratedRuntime(config, context.logger(), 'rewards-etl verify');
      try {
        const { db, clock } = runtime.deps;
        // Every window of the range, whatever its state: one not complete is not verified.
        // Windows older than CHECKINS_RETENTION are not verified: their rows are (being) dropped.
        const cutoff = retentionCutoff(clock.now().getTime(), config.checkins.retentionMs);
        const from =
          cutoff !== null && (range.from === undefined || range.from.getTime() < cutoff)
            ? new Date(cutoff)
            : range.from;
        const windows = await windowsInRange(db, { ...range, ...(from === undefined ? {} : { from }) });
        const rows: VerifyRow[] = [];
        for (const window of windows) {
          const base = { start: window.window_start, end: window.window_end, rejected: window.rows_rejected };
          if (window.status !== 'complete') {
            const counts = await countWindowRows(db, window.window_start, window.window_end, null);
            const why = window.last_error === null ? '' : `: ${window.last_error}`;
            rows.push({
              ...base,
              api: null,
              warehouse: counts.total,
              result: `${window.status}${why}`,
              ok: false,
            });
            continue;
          }
          const probe = await probeWindow(runtime.deps, window);
          rows.push({
            ...base,
            api: probe.apiTotal,
            warehouse: probe.warehouse,
            result: probe.matches ? 'ok' : 'MISMATCH',
            ok: probe.matches,
          });
          if (probe.matches) await markVerified(db, windowOf(window), clock.now());
        }
        const bad = rows.filter((row) => !row.ok);
        const unfinished = bad.filter((row) => row.api === null).length;
        context.stdout.write(renderTable(options.all === true ? rows : bad));
        context.stdout.write(
          `${rows.length} window(s) checked, ${rows.length - bad.length} match, ` +
            `${bad.length - unfinished} differ, ${unfinished} not complete` +
            ` (api ${sum(rows, 'api')} vs warehouse ${sum(rows, 'warehouse')} + ${sum(rows, 'rejected')} rejected)\n`,
        );
        // check_ins_daily against the rows, for the days of the windows that matched the API.
        const days = rollupDayRanges(
          rows.filter((row) => row.ok).map((row) => ({ start: row.start.getTime(), end: row.end.getTime() })),
        );
        let rollupDiffers = 0;
        for (const { from, to } of days) {
          const differences = await compareRollupWithRows(db, from, to);
          rollupDiffers += differences.length;
          for (const d of differences.slice(0, 20)) {
            context.stdout.write(
              `check_ins_daily ${d.day} location ${d.locationId}: rollup ${describeGroup(d.rollup)}, rows ${describeGroup(d.rows)}\n`,
            );
          }
          if (differences.length > 0 && options.repair === true) {
            const written = await rebuildRollupDays(db, from, to);
            context.stdout.write(
              `rebuilt check_ins_daily for ${from}..${to} from the rows (${written} group(s))\n`,
            );
          }
        }
        const dayCount = days.reduce((n, r) => n + (Date.parse(r.to) - Date.parse(r.from)) / 86_400_000, 0);
        context.stdout.write(
          `check_ins_daily: ${dayCount} day(s) checked against the rows, ${rollupDiffers} group(s) differ\n`,
        );
        if (bad.length > 0 && options.repair === true) {
          const queues = createQueues(config, runtime.redis);
          try {
            const reopened = [];
            for (const row of bad.filter((bad) => bad.api !== null)) {
              const window = { start: row.start.getTime(), end: row.end.getTime() };
              await resetForRepage(db, window, {
                now: clock.now(),
                reason: `verify: api ${row.api}, warehouse ${row.warehouse}`,
                countAsRepage: false,
                onlyIf: 'complete',
              });
              const reloaded = await loadWindow(db, window);
              if (reloaded !== undefined) reopened.push(reloaded);
            }
            const queue = queues.get(QUEUES.checkinsWindow);
            if (queue !== undefined) await enqueueWindows(queue, reopened);
            context.stdout.write(
              `re-queued ${reopened.length} window(s) for re-paging: ${reopened.map((w) => windowOf(w).start).length} jobs\n`,
            );
          } finally {
            await Promise.all([...queues.values()].map((queue) => queue.close()));
          }
        }
        if (bad.length > 0 || rollupDiffers > 0) throw new CliExit(ExitCode.verifyMismatch, '');
      } finally {
        await runtime.close();
      }
    });
}

function describeGroup(group: { checkIns: number; svcPay: number; median: number | null } | null): string {
  if (group === null) return 'none';
  return `${group.checkIns} check-ins, ${group.svcPay} pay, median ${group.median === null ? '-' : group.median.toFixed(2)} min`;
}

function sum(rows: VerifyRow[], key: 'api' | 'warehouse' | 'rejected'): number {
  return rows.reduce((total, row) => total + (row[key] ?? 0), 0);
}

function renderTable(rows: VerifyRow[]): string {
  if (rows.length === 0) return '';
  const header = ['window start', 'window end', 'api', 'warehouse', 'rejected', 'result'];
  const lines = rows.map((row) => [
    row.start.toISOString(),
    row.end.toISOString(),
    row.api === null ? '-' : String(row.api),
    String(row.warehouse),
    String(row.rejected),
    stripControlCharacters(row.result),
  ]);
  const widths = header.map((title, i) =>
    Math.max(title.length, ...lines.map((line) => line[i]?.length ?? 0)),
  );
  const format = (cells: string[]) =>
    cells
      .map((cell, i) => (i >= 2 && i <= 4 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ');
  return [format(header), ...lines.map(format)].join('\n') + '\n';
}
