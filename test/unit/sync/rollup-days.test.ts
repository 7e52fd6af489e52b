import { describe, expect, it } from 'vitest';
import { rollupDayRanges } from '../../../src/sync/rollup-days.js';

const at = (iso: string) => Date.parse(iso);

describe('rollupDayRanges: the days verify compares between check_ins_daily and the rows', () => {
  it.each([
    [[], []],
    [[['2026-11-26T10:00:00Z', '2026-11-26T11:00:00Z']], [['2026-11-26', '2026-11-27']]],
    [
      [
        ['2026-11-24T00:00:00Z', '2026-11-25T00:00:00Z'],
        ['2026-11-25T23:00:00Z', '2026-11-26T01:00:00Z'],
        ['2026-11-28T05:00:00Z', '2026-11-28T06:00:00Z'],
      ],
      [
        ['2026-11-24', '2026-11-27'],
        ['2026-11-28', '2026-11-29'],
      ],
    ],
  ])('%j → %j', (windows, ranges) => {
    const input = windows.map(([start, end]) => ({ start: at(start!), end: at(end!) }));
    expect(rollupDayRanges(input)).toEqual(ranges.map(([from, to]) => ({ from, to })));
  });
});
