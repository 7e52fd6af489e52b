import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  clampToRetention,
  monthPartitionName,
  monthStart,
  monthsCovering,
  nextMonthStart,
  parseMonthPartition,
  partitionsPastRetention,
  retentionCutoff,
} from '../../../src/sync/retention.js';

const at = (iso: string) => Date.parse(iso);
const instant = fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 });

describe('month partitions: UTC calendar months named check_ins_pYYYYMM', () => {
  it.each([
    ['2026-11-26T13:00:00Z', 'check_ins_p202611', '2026-11-01T00:00:00Z', '2026-12-01T00:00:00Z'],
    ['2026-12-31T23:59:59.999Z', 'check_ins_p202612', '2026-12-01T00:00:00Z', '2027-01-01T00:00:00Z'],
    ['2027-01-01T00:00:00Z', 'check_ins_p202701', '2027-01-01T00:00:00Z', '2027-02-01T00:00:00Z'],
    ['2028-02-29T12:00:00Z', 'check_ins_p202802', '2028-02-01T00:00:00Z', '2028-03-01T00:00:00Z'],
  ])('%s lies in %s [%s, %s)', (when, name, start, end) => {
    expect(monthPartitionName(at(when))).toBe(name);
    expect(parseMonthPartition(name)).toEqual({ name, start: at(start), end: at(end) });
  });

  it('the default partition and other tables are not months', () => {
    expect(parseMonthPartition('check_ins_default')).toBeNull();
    expect(parseMonthPartition('check_ins_p2026')).toBeNull();
  });

  it('every instant lies in the month its name parses back to', () => {
    fc.assert(
      fc.property(instant, (t) => {
        const month = parseMonthPartition(monthPartitionName(t));
        return month !== null && month.start <= t && t < month.end && month.start === monthStart(t);
      }),
    );
  });
});

describe('monthsCovering: the months a range touches, and the next one, ahead of the pages', () => {
  it('a range inside one month also creates the following month', () => {
    expect(monthsCovering(at('2026-11-26T00:00:00Z'), at('2026-11-26T12:00:00Z'))).toEqual([
      at('2026-11-01T00:00:00Z'),
      at('2026-12-01T00:00:00Z'),
    ]);
  });

  it('a backfill across a year end covers each month once, in order', () => {
    expect(monthsCovering(at('2026-11-20T00:00:00Z'), at('2027-01-03T00:00:00Z'))).toEqual([
      at('2026-11-01T00:00:00Z'),
      at('2026-12-01T00:00:00Z'),
      at('2027-01-01T00:00:00Z'),
      at('2027-02-01T00:00:00Z'),
    ]);
  });

  it('every instant of the range lies in one of the months, which are adjacent', () => {
    fc.assert(
      fc.property(instant, instant, instant, (a, b, c) => {
        const [from, to] = a <= b ? [a, b] : [b, a];
        const months = monthsCovering(from, to);
        const adjacent = months.every((m, i) => i === 0 || nextMonthStart(months[i - 1]!) === m);
        const t = from + (Math.abs(c - from) % Math.max(1, to - from));
        const inside = months.some((m) => m <= t && t < nextMonthStart(m));
        return adjacent && inside && months.at(-1) === nextMonthStart(to);
      }),
    );
  });
});

describe('retention: whole months past the cutoff are dropped, nothing newer', () => {
  const months = ['check_ins_p202609', 'check_ins_p202610', 'check_ins_p202611'].map((name) =>
    parseMonthPartition(name)!,
  );

  it('is off without CHECKINS_RETENTION', () => {
    expect(retentionCutoff(at('2026-11-26T00:00:00Z'), undefined)).toBeNull();
    const range = { from: 1, to: 2 };
    expect(clampToRetention(range, null)).toBe(range);
  });

  it.each([
    ['2026-10-01T00:00:00Z', ['check_ins_p202609']],
    ['2026-10-31T23:59:59Z', ['check_ins_p202609']],
    ['2026-09-30T00:00:00Z', []],
    ['2026-12-01T00:00:00Z', ['check_ins_p202609', 'check_ins_p202610', 'check_ins_p202611']],
  ])('a cutoff at %s drops %j (a month partly inside retention is kept)', (cutoff, dropped) => {
    expect(partitionsPastRetention(months, at(cutoff)).map((p) => p.name)).toEqual(dropped);
  });

  it('a range is planned from the cutoff on, or not at all when wholly before it', () => {
    const cutoff = at('2026-10-15T00:00:00Z');
    expect(
      clampToRetention({ from: at('2026-10-01T00:00:00Z'), to: at('2026-11-01T00:00:00Z') }, cutoff),
    ).toEqual({
      from: cutoff,
      to: at('2026-11-01T00:00:00Z'),
    });
    expect(
      clampToRetention({ from: at('2026-09-01T00:00:00Z'), to: at('2026-10-01T00:00:00Z') }, cutoff),
    ).toBeNull();
    expect(retentionCutoff(at('2026-11-26T00:00:00Z'), 400 * 86_400_000)).toBe(at('2025-10-22T00:00:00Z'));
  });

  it('a dropped partition never holds an instant at or after the cutoff', () => {
    fc.assert(
      fc.property(instant, instant, (t, cutoff) => {
        const partition = parseMonthPartition(monthPartitionName(t))!;
        const dropped = partitionsPastRetention([partition], cutoff).length === 1;
        return !dropped || partition.end <= cutoff;
      }),
    );
  });
});
