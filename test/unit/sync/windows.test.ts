import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MIN_SPLIT_MS,
  advanceWatermark,
  lookbackWindows,
  mergeableCells,
  planWindows,
  planWindowsWithHistory,
  splitWindow,
  windowKey,
  type Window,
  type WindowState,
} from '../../../src/sync/windows.js';

const HOUR = 3_600_000;

/** True when the windows cover [from, to) exactly: sorted, adjacent, no gap, no overlap. */
function partitions(windows: readonly Window[], from: number, to: number): boolean {
  if (from >= to) return windows.length === 0;
  if (windows[0]?.start !== from || windows.at(-1)?.end !== to) return false;
  return windows.every((w, i) => w.start < w.end && (i === 0 || windows[i - 1]?.end === w.start));
}

const instant = fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 });

describe('planWindowsWithHistory: coarse windows for history older than the look-back', () => {
  const DAY = 24 * HOUR;
  it('days before the fine boundary, hours after it, cut exactly at the boundary', () => {
    const from = Date.UTC(2026, 10, 1);
    const fineFrom = Date.UTC(2026, 10, 3, 5);
    const windows = planWindowsWithHistory(from, fineFrom + 2 * HOUR, {
      windowMs: HOUR,
      historyWindowMs: DAY,
      fineFrom,
    });
    expect(windows.map((w) => (w.end - w.start) / HOUR)).toEqual([24, 24, 5, 1, 1]);
    expect(windows[3]!.start).toBe(fineFrom);
  });
  it('property: windows partition [from, to); fine ones after the boundary, none longer than its grid', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 60 * DAY }),
        fc.integer({ min: 0, max: 30 * DAY }),
        fc.integer({ min: -5 * DAY, max: 40 * DAY }),
        fc.constantFrom(HOUR, 30 * 60_000, 6 * HOUR),
        (fromOffset, span, boundaryOffset, windowMs) => {
          const from = Date.UTC(2026, 0, 1) + fromOffset;
          const to = from + span;
          const fineFrom = Math.floor((from + boundaryOffset) / windowMs) * windowMs;
          const windows = planWindowsWithHistory(from, to, { windowMs, historyWindowMs: DAY, fineFrom });
          expect(partitions(windows, from, to)).toBe(true);
          for (const w of windows) {
            if (w.start >= fineFrom) expect(w.end - w.start).toBeLessThanOrEqual(windowMs);
            else expect(w.end).toBeLessThanOrEqual(Math.max(fineFrom, w.start + DAY));
          }
        },
      ),
    );
  });
});

describe('planWindows', () => {
  it('cuts a range on an hour grid aligned to the epoch, partial at both ends', () => {
    const from = Date.parse('2026-11-01T10:15:00Z');
    const to = Date.parse('2026-11-01T13:05:00Z');
    expect(
      planWindows(from, to, HOUR).map((w) => [
        new Date(w.start).toISOString(),
        new Date(w.end).toISOString(),
      ]),
    ).toEqual([
      ['2026-11-01T10:15:00.000Z', '2026-11-01T11:00:00.000Z'],
      ['2026-11-01T11:00:00.000Z', '2026-11-01T12:00:00.000Z'],
      ['2026-11-01T12:00:00.000Z', '2026-11-01T13:00:00.000Z'],
      ['2026-11-01T13:00:00.000Z', '2026-11-01T13:05:00.000Z'],
    ]);
  });

  it('plans nothing for an empty or inverted range', () => {
    expect(planWindows(5, 5, HOUR)).toEqual([]);
    expect(planWindows(10, 5, HOUR)).toEqual([]);
  });

  it('partitions any range exactly (no gap, no overlap), for any window length', () => {
    fc.assert(
      fc.property(
        instant,
        fc.integer({ min: 0, max: 3 * 24 * HOUR }),
        fc.integer({ min: 60_000, max: 7 * 24 * HOUR }),
        (from, span, windowMs) => {
          expect(partitions(planWindows(from, from + span, windowMs), from, from + span)).toBe(true);
        },
      ),
    );
  });

  it('is deterministic: planning in two steps gives the same grid windows as planning at once', () => {
    fc.assert(
      fc.property(
        instant,
        fc.integer({ min: 1, max: 10 * 24 * HOUR }),
        fc.integer({ min: 1, max: 10 * 24 * HOUR }),
        (from, a, b) => {
          const whole = planWindows(from, from + a + b, HOUR);
          const inTwo = [...planWindows(from, from + a, HOUR), ...planWindows(from + a, from + a + b, HOUR)];
          // Interior grid windows (those not cut by the step) carry the same keys either way.
          const interior = (ws: Window[]) =>
            ws.filter((w) => w.start % HOUR === 0 && w.end % HOUR === 0).map(windowKey);
          expect(interior(inTwo).every((key) => interior(whole).includes(key))).toBe(true);
          expect(partitions(inTwo, from, from + a + b)).toBe(true);
        },
      ),
    );
  });
});

describe('splitWindow', () => {
  it('leaves a window that fits alone', () => {
    expect(splitWindow({ start: 0, end: HOUR }, 500, 5_000)).toEqual([{ start: 0, end: HOUR }]);
  });

  it('splits into enough equal parts for the target', () => {
    const parts = splitWindow({ start: 0, end: HOUR }, 40_000, 5_000);
    expect(parts).toHaveLength(8);
    expect(parts.every((p) => p.end - p.start === HOUR / 8)).toBe(true);
  });

  it('never splits below the minimum window', () => {
    expect(splitWindow({ start: 0, end: MIN_SPLIT_MS }, 1e9, 1)).toEqual([{ start: 0, end: MIN_SPLIT_MS }]);
    expect(
      splitWindow({ start: 0, end: 4 * MIN_SPLIT_MS }, 1e9, 1).every((p) => p.end - p.start >= MIN_SPLIT_MS),
    ).toBe(true);
  });

  it('partitions the window exactly under any split, recursively', () => {
    fc.assert(
      fc.property(
        instant,
        fc.integer({ min: 1, max: 48 * HOUR }),
        fc.array(fc.integer({ min: 0, max: 200_000 }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 100, max: 10_000 }),
        (start, length, counts, target) => {
          let windows: Window[] = [{ start, end: start + length }];
          for (const count of counts) windows = windows.flatMap((w) => splitWindow(w, count, target));
          expect(partitions(windows, start, start + length)).toBe(true);
        },
      ),
    );
  });
});

describe('advanceWatermark', () => {
  const w = (start: number, end: number, status: WindowState['status']): WindowState => ({
    start,
    end,
    status,
  });

  it('moves across contiguous complete windows and stops at the first unfinished one', () => {
    const windows = [w(0, 10, 'complete'), w(10, 20, 'complete'), w(20, 30, 'failed'), w(30, 40, 'complete')];
    expect(advanceWatermark(0, windows)).toBe(20);
  });

  it('stops at a gap and never moves back', () => {
    expect(advanceWatermark(0, [w(0, 10, 'complete'), w(15, 20, 'complete')])).toBe(10);
    expect(advanceWatermark(50, [w(0, 10, 'complete')])).toBe(50);
  });

  it('follows split windows', () => {
    expect(advanceWatermark(0, [w(0, 5, 'complete'), w(5, 10, 'complete'), w(10, 20, 'running')])).toBe(10);
  });

  it('never passes a window that is not complete (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<WindowState['status']>('pending', 'running', 'complete', 'failed'), {
          maxLength: 40,
        }),
        (statuses) => {
          const windows = statuses.map((status, i) => w(i * 10, i * 10 + 10, status));
          const mark = advanceWatermark(0, windows);
          const firstUnfinished = statuses.findIndex((s) => s !== 'complete');
          expect(mark).toBe(firstUnfinished === -1 ? statuses.length * 10 : firstUnfinished * 10);
        },
      ),
    );
  });
});

describe('look-back', () => {
  it('re-checks complete windows that overlap the look-back period and are due for a check', () => {
    const windows = planWindows(0, 10 * HOUR, HOUR).map((w, i) => ({
      ...w,
      // Window 8 was checked a minute ago; the others long ago or never.
      lastCheckedAt: i === 8 ? 10 * HOUR - 60_000 : i % 2 === 0 ? null : 0,
    }));
    const picked = lookbackWindows(windows, 10 * HOUR, 3 * HOUR, 15 * 60_000);
    expect(picked.map((x) => x.start / HOUR)).toEqual([7, 9]);
  });
});

describe('mergeableCells', () => {
  const cw = (start: number, end: number, apiTotalCount = 10) => ({ start, end, apiTotalCount });

  it('merges complete fragments that exactly cover a grid cell', () => {
    const fragments = [cw(0, 10 * 60_000), cw(10 * 60_000, 11 * 60_000), cw(11 * 60_000, HOUR)];
    expect(mergeableCells(fragments, HOUR, 1_000)).toEqual([{ cell: { start: 0, end: HOUR }, fragments }]);
  });

  it('leaves a cell with a gap, a single window, or too many rows', () => {
    expect(mergeableCells([cw(0, 60_000), cw(120_000, HOUR)], HOUR, 1_000)).toEqual([]);
    expect(mergeableCells([cw(0, HOUR)], HOUR, 1_000)).toEqual([]);
    expect(mergeableCells([cw(0, 60_000, 600), cw(60_000, HOUR, 600)], HOUR, 1_000)).toEqual([]);
  });

  it('a merged cell is exactly the union of its fragments (property)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: HOUR - 1 }), { maxLength: 8 }), (cuts) => {
        const points = [0, ...[...cuts].sort((a, b) => a - b), HOUR];
        const fragments = points.slice(0, -1).map((start, i) => cw(start, points[i + 1]!));
        const merged = mergeableCells(fragments, HOUR, 1e9);
        expect(merged).toHaveLength(fragments.length >= 2 ? 1 : 0);
        if (merged[0]) expect(partitions(merged[0].fragments, 0, HOUR)).toBe(true);
      }),
    );
  });
});
