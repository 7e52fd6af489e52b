import { Command } from 'commander';
import { requireApiBaseUrl, requireApiKey } from '../../config/config.js';
import type { CliContext } from '../context.js';
import { openMigratedRuntime } from '../warehouse-ready.js';
import { CliExit, ExitCode } from '../exit-codes.js';
import { parseInstant } from '../parse-instant.js';
import { stripControlCharacters } from '../../terminal-text.js';
import type { PipelineRuntime } from '../../runtime/pipeline.js';
import type { WindowVerdict } from '../../streams/checkins/verify-windows.js';

export function verifyCommand(context: CliContext): Command {
  return new Command('verify')
    .description(
      "for each check-in window, compare the warehouse count with the API's total_count (one page_size=1 probe per window); a window not complete (failed, pending, running) counts as not verified; exit 3 on any",
    )
    .option('--from <iso>', 'only windows starting at or after this instant')
    .option('--to <iso>', 'only windows ending at or before this instant')
    .option('--repair', 're-queue the windows that differ')
    .option('--all', 'print every window, not only mismatches')
    .action(async (options: VerifyOptions) => {
      const config = context.config();
      const range = {
        ...(options.from === undefined ? {} : { from: parseInstant('--from', options.from) }),
        ...(options.to === undefined ? {} : { to: parseInstant('--to', options.to) }),
      };
      requireApiBaseUrl(config);
      requireApiKey(config);
      const runtime = await openMigratedRuntime(config, context.logger(), 'rewards-etl verify');
      try {
        await verify(context, runtime, range, options);
      } finally {
        await runtime.close();
      }
    });
}

interface VerifyOptions {
  from?: string;
  to?: string;
  repair?: boolean;
  all?: boolean;
}

/** The windows (src/streams/checkins/verify-windows.ts), then the rollup, then the repair. */
async function verify(
  context: CliContext,
  runtime: PipelineRuntime,
  range: { from?: Date; to?: Date },
  options: VerifyOptions,
): Promise<void> {
  const { verifyWindows, repairWindows } = await import('../../streams/checkins/verify-windows.js');
  const { verifyRollupDays } = await import('../../streams/checkins/verify-rollup.js');
  const rows = await verifyWindows(runtime.deps, range);
  const bad = rows.filter((row) => !row.ok);
  const unfinished = bad.filter((row) => row.api === null).length;
  context.stdout.write(renderTable(options.all === true ? rows : bad));
  context.stdout.write(
    `${rows.length} window(s) checked, ${rows.length - bad.length} match, ` +
      `${bad.length - unfinished} differ, ${unfinished} not complete` +
      ` (api ${sum(rows, 'api')} vs warehouse ${sum(rows, 'warehouse')} + ${sum(rows, 'rejected')} rejected)\n`,
  );
  const rollup = await verifyRollupDays(runtime.deps, rows, { repair: options.repair === true });
  for (const { from, to, differences, rebuilt } of rollup.ranges) {
    for (const d of differences.slice(0, 20)) {
      context.stdout.write(
        `check_ins_daily ${d.day} location ${d.locationId}: rollup ${describeGroup(d.rollup)}, rows ${describeGroup(d.rows)}\n`,
      );
    }
    if (rebuilt !== null) {
      context.stdout.write(
        `rebuilt check_ins_daily for ${from}..${to} from the rows (${rebuilt} group(s))\n`,
      );
    }
  }
  context.stdout.write(
    `check_ins_daily: ${rollup.days} day(s) checked against the rows, ${rollup.differ} group(s) differ\n`,
  );
  if (bad.length > 0 && options.repair === true) {
    const { enqueueWindowsFor } = await import('../window-queue.js');
    const reopened = await repairWindows(runtime.deps, bad);
    const jobs = await enqueueWindowsFor(runtime.deps.config, runtime.redis, reopened);
    context.stdout.write(`re-queued ${reopened.length} window(s) for re-paging: ${jobs} jobs\n`);
  }
  if (bad.length > 0 || rollup.differ > 0) throw new CliExit(ExitCode.verifyMismatch, '');
}

function describeGroup(group: { checkIns: number; svcPay: number; median: number | null } | null): string {
  if (group === null) return 'none';
  return `${group.checkIns} check-ins, ${group.svcPay} pay, median ${group.median === null ? '-' : group.median.toFixed(2)} min`;
}

function sum(rows: WindowVerdict[], key: 'api' | 'warehouse' | 'rejected'): number {
  return rows.reduce((total, row) => total + (row[key] ?? 0), 0);
}

function renderTable(rows: readonly WindowVerdict[]): string {
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
