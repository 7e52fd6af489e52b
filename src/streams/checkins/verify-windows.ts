import { retentionCutoff } from '../../sync/retention.js';
import { countWindowRows } from '../../warehouse/check-ins.js';
import type { SyncWindow } from '../../warehouse/schema.js';
import { loadWindow, windowOf, windowsInRange } from './window-lifecycle.js';
import type { CheckinsDeps } from './deps.js';
import { probeAndRecord, reopenForRepage } from './window-check.js';

/** One window as `verify` reports it. */
export interface WindowVerdict {
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

type VerifyDeps = Pick<CheckinsDeps, 'db' | 'api' | 'clock' | 'config' | 'signal'>;

/**
 * `verify`: every window of the range, whatever its state (one not complete is not verified),
 * checked as the look-back checks one (window-check.ts); a match is recorded as verified.
 * Windows older than CHECKINS_RETENTION are not verified: their rows are (being) dropped.
 */
export async function verifyWindows(
  deps: VerifyDeps,
  range: { from?: Date; to?: Date },
): Promise<WindowVerdict[]> {
  const cutoff = retentionCutoff(deps.clock.now().getTime(), deps.config.checkins.retentionMs);
  const from =
    cutoff !== null && (range.from === undefined || range.from.getTime() < cutoff)
      ? new Date(cutoff)
      : range.from;
  const windows = await windowsInRange(deps.db, { ...range, ...(from === undefined ? {} : { from }) });
  const verdicts: WindowVerdict[] = [];
  for (const row of windows) verdicts.push(await verdictOf(deps, row));
  return verdicts;
}

async function verdictOf(deps: VerifyDeps, row: SyncWindow): Promise<WindowVerdict> {
  const base = { start: row.window_start, end: row.window_end, rejected: row.rows_rejected };
  if (row.status !== 'complete') {
    const counts = await countWindowRows(deps.db, row.window_start, row.window_end, null);
    const why = row.last_error === null ? '' : `: ${row.last_error}`;
    return { ...base, api: null, warehouse: counts.total, result: `${row.status}${why}`, ok: false };
  }
  const probe = await probeAndRecord(deps, row, windowOf(row), { as: 'verified' });
  return {
    ...base,
    api: probe.apiTotal,
    warehouse: probe.warehouse,
    result: probe.matches ? 'ok' : 'MISMATCH',
    ok: probe.matches,
  };
}

/**
 * `verify --repair`: re-opens the complete windows whose counts differed (as the look-back would),
 * and returns their rows, for the caller to hand to the workers. A window not complete is left:
 * it is already due.
 */
export async function repairWindows(
  deps: Pick<CheckinsDeps, 'db' | 'clock'>,
  verdicts: readonly WindowVerdict[],
): Promise<SyncWindow[]> {
  const reopened: SyncWindow[] = [];
  for (const verdict of verdicts) {
    if (verdict.ok || verdict.api === null) continue;
    const window = { start: verdict.start.getTime(), end: verdict.end.getTime() };
    const reason = `verify: api ${verdict.api}, warehouse ${verdict.warehouse}`;
    await reopenForRepage(deps, window, reason, deps.clock.now());
    const reloaded = await loadWindow(deps.db, window);
    if (reloaded !== undefined) reopened.push(reloaded);
  }
  return reopened;
}
