/**
 * Pure rules of check_ins' monthly partitions and of retention (docs/warehouse-scale.md).
 * Months are UTC calendar months; instants are epoch milliseconds.
 */

export interface MonthPartition {
  name: string;
  /** First instant of the month (inclusive). */
  start: number;
  /** First instant of the next month (exclusive). */
  end: number;
}

const MONTH_NAME = /^check_ins_p(\d{4})(\d{2})$/;

export function monthStart(instant: number): number {
  const date = new Date(instant);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

export function nextMonthStart(instant: number): number {
  const date = new Date(instant);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}

/** The partition name of the month holding `instant`: check_ins_pYYYYMM (the SQL function's rule). */
export function monthPartitionName(instant: number): string {
  const date = new Date(instant);
  return `check_ins_p${date.getUTCFullYear()}${String(date.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The month a partition name stands for, or null for any other table (the default partition). */
export function parseMonthPartition(name: string): MonthPartition | null {
  const match = MONTH_NAME.exec(name);
  if (match === null) return null;
  const start = Date.UTC(Number(match[1]), Number(match[2]) - 1, 1);
  return { name, start, end: nextMonthStart(start) };
}

/**
 * The first instants of the months that [from, to) touches, plus the month after `to`'s: a pass
 * creates its months ahead, so a row paged just after a month turns never lands in the default
 * partition.
 */
export function monthsCovering(from: number, to: number): number[] {
  const months: number[] = [];
  const last = nextMonthStart(Math.max(from, to));
  for (let month = monthStart(Math.min(from, to)); month <= last; month = nextMonthStart(month)) {
    months.push(month);
  }
  return months;
}

/** Where retention cuts: nothing older is kept, planned or verified. Null: retention is off. */
export function retentionCutoff(now: number, retentionMs: number | undefined): number | null {
  return retentionMs === undefined ? null : now - retentionMs;
}

/** The partitions wholly before the cutoff (a month partly inside retention is kept whole). */
export function partitionsPastRetention(
  partitions: readonly MonthPartition[],
  cutoff: number,
): MonthPartition[] {
  return partitions.filter((partition) => partition.end <= cutoff).sort((a, b) => a.start - b.start);
}

/** A range moved past the cutoff: its start is never older than the cutoff. Null when it lies wholly before it. */
export function clampToRetention<T extends { from: number; to: number }>(
  range: T,
  cutoff: number | null,
): T | null {
  if (cutoff === null || range.from >= cutoff) return range;
  if (range.to <= cutoff) return null;
  return { ...range, from: cutoff };
}
