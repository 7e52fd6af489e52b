import { rollupDayRanges } from '../../sync/rollup-days.js';
import {
  compareRollupWithRows,
  rebuildRollupDays,
  settleRollupDays,
  type RollupDifference,
} from '../../warehouse/check-ins-daily.js';
import type { CheckinsDeps } from './deps.js';
import type { WindowVerdict } from './verify-windows.js';

/** One range of consecutive UTC days checked: its differing groups, and what a repair rebuilt. */
export interface RollupDaysCheck {
  from: string;
  to: string;
  differences: RollupDifference[];
  /** Groups written by `--repair` (null: nothing rebuilt). */
  rebuilt: number | null;
}

/**
 * `verify`'s rollup check: check_ins_daily against the rows, for the days of the windows that
 * matched the API, after settling their unsettled medians. With `repair`, the days that differ are rebuilt from the rows.
 */
export async function verifyRollupDays(
  deps: Pick<CheckinsDeps, 'db'>,
  verdicts: readonly WindowVerdict[],
  options: { repair: boolean },
): Promise<{ ranges: RollupDaysCheck[]; days: number; differ: number }> {
  const days = rollupDayRanges(
    verdicts.filter((v) => v.ok).map((v) => ({ start: v.start.getTime(), end: v.end.getTime() })),
  );
  const ranges: RollupDaysCheck[] = [];
  for (const { from, to } of days) {
    // Medians still unsettled are stored first (their windows are complete), so the comparison
    // checks the stored values, not only the view's read-time fallback.
    await settleRollupDays(deps.db, from, to);
    const differences = await compareRollupWithRows(deps.db, from, to);
    const rebuilt =
      differences.length > 0 && options.repair ? await rebuildRollupDays(deps.db, from, to) : null;
    ranges.push({ from, to, differences, rebuilt });
  }
  return {
    ranges,
    days: days.reduce((n, r) => n + (Date.parse(r.to) - Date.parse(r.from)) / 86_400_000, 0),
    differ: ranges.reduce((n, r) => n + r.differences.length, 0),
  };
}
