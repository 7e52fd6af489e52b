import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_START_MS,
  plannedState,
  requestedPlanRange,
  windowsForGaps,
} from '../../../src/sync/checkin-plan.js';
import type { Window } from '../../../src/sync/windows.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const now = new Date('2026-11-26T12:00:00Z');
const at = (iso: string) => new Date(iso);

describe('requestedPlanRange: what a planner tick asks for', () => {
  const settings = { startAt: undefined, safetyLagMs: 2 * MINUTE };

  it('a first tick: from 30 days back to now minus the safety lag', () => {
    expect(requestedPlanRange({}, null, settings, now)).toEqual({
      from: new Date(now.getTime() - DEFAULT_START_MS),
      to: new Date(now.getTime() - 2 * MINUTE),
    });
  });

  it('CHECKINS_START_AT when no frontier; the frontier once there is one; the range given first', () => {
    const startAt = at('2026-01-01T00:00:00Z');
    const frontier = at('2026-11-26T11:00:00Z');
    expect(requestedPlanRange({}, null, { ...settings, startAt }, now).from).toEqual(startAt);
    expect(requestedPlanRange({}, frontier, { ...settings, startAt }, now).from).toEqual(frontier);
    const range = { from: at('2026-05-01T00:00:00Z'), to: at('2026-06-01T00:00:00Z') };
    expect(requestedPlanRange(range, frontier, { ...settings, startAt }, now)).toEqual(range);
  });
});

describe('windowsForGaps: the new windows of a range', () => {
  const settings = { windowMs: HOUR, historyWindowMs: DAY, lookbackMs: 2 * HOUR };

  it('fine windows inside the look-back, coarse ones before it, none over known windows', () => {
    const start = Date.UTC(2026, 10, 24);
    const end = now.getTime();
    const known = [{ start: Date.UTC(2026, 10, 25), end: Date.UTC(2026, 10, 25, 6) }];
    const windows = windowsForGaps({ start, end }, known, settings, now.getTime());
    const fineFrom = now.getTime() - 2 * HOUR;
    expect(windows[0]).toEqual({ start, end: Date.UTC(2026, 10, 25) });
    expect(windows[1]).toEqual({ start: Date.UTC(2026, 10, 25, 6), end: Date.UTC(2026, 10, 26) });
    expect(windows.filter((w) => w.start >= fineFrom).every((w) => w.end - w.start <= HOUR)).toBe(true);
    expect(windows.at(-1)?.end).toBe(end);
  });

  it('the new windows and the known ones cover the range, without overlapping (property)', () => {
    const window = fc
      .tuple(fc.integer({ min: 0, max: 4 * DAY }), fc.integer({ min: 1, max: DAY }))
      .map(([start, length]): Window => ({ start, end: start + length }));
    fc.assert(
      fc.property(
        window,
        fc.array(window, { maxLength: 5 }),
        fc.integer({ min: 0, max: 5 * DAY }),
        (range, k, t) => {
          const known = [...k].sort((a, b) => a.start - b.start);
          const windows = windowsForGaps(range, known, settings, t);
          const covered = (x: Window, s: number) => x.start <= s && s < x.end;
          windows.forEach((w, i) => {
            expect(w.start).toBeLessThan(w.end);
            if (i > 0) expect(w.start).toBeGreaterThanOrEqual(windows[i - 1]!.end);
            expect(known.some((x) => x.start < w.end && w.start < x.end)).toBe(false);
          });
          // Every boundary instant of the range is covered by a new window or a known one.
          const points = [
            range.start,
            range.end - 1,
            ...windows.flatMap((w) => [w.start, w.end]),
            ...known.map((x) => x.end),
          ];
          for (const s of points.filter((p) => p >= range.start && p < range.end)) {
            expect(windows.some((w) => covered(w, s)) || known.some((x) => covered(x, s))).toBe(true);
          }
        },
      ),
    );
  });
});

describe('plannedState: the planner state after a tick', () => {
  const from = at('2026-11-26T10:00:00Z');
  const to = at('2026-11-26T11:00:00Z');

  it('the first plan sets the watermark to its start and the frontier to its end', () => {
    expect(plannedState({ watermark: null, frontier: null }, { from, to })).toEqual({
      watermark: from,
      frontier: to,
    });
  });

  it('an empty plan sets no watermark', () => {
    expect(plannedState({ watermark: null, frontier: null }, { from: to, to })).toEqual({
      watermark: null,
      frontier: to,
    });
  });

  it('the frontier never moves back and a stored watermark is kept', () => {
    const later = at('2026-11-26T11:30:00Z');
    const watermark = at('2026-11-01T00:00:00Z');
    expect(plannedState({ watermark, frontier: later }, { from, to })).toEqual({
      watermark,
      frontier: later,
    });
    expect(plannedState({ watermark, frontier: from }, { from, to })).toEqual({ watermark, frontier: to });
  });
});
