import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Cadence, ReadState } from '../../../src/sync/read-cadence.js';
import { learnedRead } from '../../../src/sync/read-cadence.js';
import { dueRecordIds } from '../../../src/sync/snapshot-read-plan.js';

const HOUR = 3_600_000;
const now = 100 * HOUR;
const cadence: Cadence = { floorMs: HOUR / 12, ceilingMs: 6 * HOUR };
const kind = 'restaurant.challenges' as const;

function read(recordId: string, hoursAgo: number, intervalHours: number): ReadState {
  return {
    kind,
    recordId,
    lastReadAtMs: now - hoursAgo * HOUR,
    lastChangedAtMs: null,
    intervalMs: intervalHours * HOUR,
  };
}

describe('dueRecordIds', () => {
  it('takes never-read records first, then the latest relative to their interval; leaves the rest', () => {
    const states = [read('quiet', 1, 6), read('late', 3, 1), read('just-due', 1, 1), read('deleted', 10, 1)];
    expect(
      dueRecordIds({ kind, ids: ['quiet', 'late', 'just-due', 'new'], states, nowMs: now, cadence }),
    ).toEqual(['new', 'late', 'just-due']);
  });

  it('ignores states of other kinds', () => {
    const other: ReadState = { ...read('a', 1, 6), kind: 'member.visits' };
    expect(dueRecordIds({ kind, ids: ['a'], states: [other], nowMs: now, cadence })).toEqual(['a']);
  });

  it('property: a record read longer ago than its ceiling is always due; a record read within the floor never is', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.record({
            id: fc.string({ minLength: 1, maxLength: 3 }),
            agoMs: fc.integer({ min: 0, max: 20 * HOUR }),
            intervalMs: fc.integer({ min: 1, max: 20 * HOUR }),
          }),
          { selector: (r) => r.id, maxLength: 20 },
        ),
        (records) => {
          const states = records.map((r) => ({
            ...read(r.id, 0, 0),
            lastReadAtMs: now - r.agoMs,
            intervalMs: r.intervalMs,
          }));
          const due = new Set(
            dueRecordIds({ kind, ids: records.map((r) => r.id), states, nowMs: now, cadence }),
          );
          for (const r of records) {
            if (r.agoMs >= cadence.ceilingMs) expect(due.has(r.id)).toBe(true);
            if (r.agoMs < cadence.floorMs) expect(due.has(r.id)).toBe(false);
          }
        },
      ),
    );
  });
});

describe('learnedRead', () => {
  it('halves the interval after a change and stretches it after a read that found none, within the cadence', () => {
    const changed = learnedRead({
      kind,
      recordId: 'r',
      previousIntervalMs: 2 * HOUR,
      changed: true,
      cadence,
    });
    const quiet = learnedRead({ kind, recordId: 'r', previousIntervalMs: 2 * HOUR, changed: false, cadence });
    expect(changed.intervalMs).toBe(HOUR);
    expect(quiet.intervalMs).toBe(3 * HOUR);
    const capped = learnedRead({
      kind,
      recordId: 'r',
      previousIntervalMs: 5 * HOUR,
      changed: false,
      cadence,
    });
    expect(capped.intervalMs).toBe(cadence.ceilingMs);
  });

  it('starts a first read between half the ceiling and the ceiling, the same for the same record', () => {
    const first = learnedRead({ kind, recordId: 'r1', previousIntervalMs: null, changed: true, cadence });
    expect(first.intervalMs).toBeGreaterThanOrEqual(cadence.ceilingMs / 2);
    expect(first.intervalMs).toBeLessThanOrEqual(cadence.ceilingMs);
    expect(
      learnedRead({ kind, recordId: 'r1', previousIntervalMs: null, changed: false, cadence }).intervalMs,
    ).toBe(first.intervalMs);
  });
});
