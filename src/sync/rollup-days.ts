import type { Window } from './windows.js';

const DAY_MS = 86_400_000;

/**
 * The UTC days the windows touch, as ranges of consecutive days [from, to) in YYYY-MM-DD: what
 * `verify` compares between check_ins_daily and the rows after verifying those windows.
 */
export function rollupDayRanges(windows: readonly Window[]): { from: string; to: string }[] {
  const days = new Set<number>();
  for (const window of windows) {
    for (let day = Math.floor(window.start / DAY_MS); day * DAY_MS < window.end; day++) days.add(day);
  }
  const sorted = [...days].sort((a, b) => a - b);
  const ranges: { from: number; to: number }[] = [];
  for (const day of sorted) {
    const last = ranges.at(-1);
    if (last !== undefined && last.to === day) last.to = day + 1;
    else ranges.push({ from: day, to: day + 1 });
  }
  const iso = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);
  return ranges.map((range) => ({ from: iso(range.from), to: iso(range.to) }));
}
