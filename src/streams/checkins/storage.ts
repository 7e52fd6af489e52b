import { clampToRetention, retentionCutoff } from '../../sync/retention.js';
import { ensureCheckInMonths } from '../../warehouse/check-in-partitions.js';
import { applyCheckInsRetention } from '../../warehouse/retention.js';
import type { CheckinsDeps } from './deps.js';

/**
 * What the check-in planner does to the warehouse before planning [from, to)
 * (docs/warehouse-scale.md): applies retention (when CHECKINS_RETENTION is set), moves the range
 * past its cutoff (a window older than retention is never planned), and creates the month
 * partitions the range needs, ahead of any page that writes into them. Returns the range to
 * plan, or null when it lies wholly past retention.
 */
export async function prepareCheckInStorage(
  deps: Pick<CheckinsDeps, 'db' | 'config' | 'logger'>,
  now: Date,
  range: { from: Date; to: Date },
): Promise<{ from: Date; to: Date } | null> {
  const { db, config, logger } = deps;
  const removed = await applyCheckInsRetention(db, now, config.checkins);
  if (removed.droppedPartitions.length > 0 || removed.windowsRemoved > 0 || removed.rollupRowsRemoved > 0) {
    logger.info({ retention: removed }, 'check-in retention removed old data');
  }
  const cutoff = retentionCutoff(now.getTime(), config.checkins.retentionMs);
  const clamped = clampToRetention({ from: range.from.getTime(), to: range.to.getTime() }, cutoff);
  if (clamped === null) return null;
  const planned = { from: new Date(clamped.from), to: new Date(clamped.to) };
  const created = await ensureCheckInMonths(db, planned.from, planned.to);
  if (created.length > 0) logger.info({ months: created }, 'created check-in month partitions');
  return planned;
}
