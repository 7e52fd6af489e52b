import { lookbackWindows } from '../../sync/windows.js';
import { countWindowRows } from '../../warehouse/check-ins.js';
import type { SyncWindow } from '../../warehouse/schema.js';
import { windowOf, windowsInRange, windowsWithDropToConfirm } from './window-lifecycle.js';
import type { CheckinsDeps } from './deps.js';
import { probeAndRecord, reopenForRepage } from './window-check.js';

/**
 * Look-back: complete windows inside CHECKINS_LOOKBACK not checked for CHECKINS_LOOKBACK_EVERY
 * (`everyMs: 0`, a foreground `run`: all of them). A window holding ongoing visits is re-paged
 * (only a read shows ended_at); any other is probed and re-paged only when the counts differ.
 */
export async function recheckLookback(
  deps: CheckinsDeps,
  options: { everyMs?: number } = {},
): Promise<{ probes: number; repaged: number }> {
  const now = deps.clock.now();
  const candidates = await lookbackCandidates(
    deps,
    now,
    options.everyMs ?? deps.config.checkins.lookbackEveryMs,
  );
  let probes = 0;
  let repaged = await confirmSuspectedDrops(deps, now);
  for (const row of candidates) {
    deps.signal?.throwIfAborted();
    const checked = await recheckWindow(deps, row, now);
    if (checked.probed) probes++;
    if (checked.reopened) repaged++;
  }
  return { probes, repaged };
}

/** The complete windows of the look-back due for a check (lookbackWindows). */
async function lookbackCandidates(deps: CheckinsDeps, now: Date, everyMs: number): Promise<SyncWindow[]> {
  const { lookbackMs, windowMs } = deps.config.checkins;
  // Windows never exceed CHECKINS_WINDOW, so none ending inside the look-back starts earlier than this.
  const from = new Date(now.getTime() - lookbackMs - windowMs);
  const complete = (await windowsInRange(deps.db, { from }, ['complete'])).map((row) => ({
    ...windowOf(row),
    lastCheckedAt: row.last_checked_at?.getTime() ?? null,
    row,
  }));
  return lookbackWindows(complete, now.getTime(), lookbackMs, everyMs).map((candidate) => candidate.row);
}

/**
 * A suspected drop is read again once it is old enough to be confirmed (or cleared), wherever
 * its window lies: outside the look-back nothing else would read it again.
 */
async function confirmSuspectedDrops(deps: CheckinsDeps, now: Date): Promise<number> {
  const confirmBefore = new Date(now.getTime() - deps.config.checkins.deleteConfirmAfterMs);
  let reopened = 0;
  for (const row of await windowsWithDropToConfirm(deps.db, confirmBefore)) {
    await reopenForRepage(deps, windowOf(row), 'confirming a suspected drop of rows', now);
    reopened++;
  }
  return reopened;
}

/** One window of the look-back: re-opened when it holds ongoing visits or its count differs. */
async function recheckWindow(
  deps: CheckinsDeps,
  row: SyncWindow,
  now: Date,
): Promise<{ probed: boolean; reopened: boolean }> {
  const window = windowOf(row);
  const counts = await countWindowRows(deps.db, row.window_start, row.window_end, null);
  let reason: string | null = counts.ongoing > 0 ? `look-back: ${counts.ongoing} ongoing visits` : null;
  if (reason === null) {
    const probe = await probeAndRecord(deps, row, window, { as: 'checked', at: now, counts });
    if (!probe.matches) reason = `look-back: api total_count ${probe.apiTotal}, warehouse ${probe.warehouse}`;
  }
  if (reason !== null) await reopenForRepage(deps, window, reason, now);
  return { probed: counts.ongoing === 0, reopened: reason !== null };
}
