import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planIntentFetches } from '../../../src/sync/intent-fetch-plan.js';
import type { DueIntent } from '../../../src/sync/intent-poll-schedule.js';

const due = (...ids: string[]): DueIntent[] => ids.map((id, rank) => ({ id, rank, createdAt: null }));

describe('the by-id fetches of a tick, in order', () => {
  it('changes first, then due intents the sweep did not show, then list-only rows with what is left', () => {
    const plan = planIntentFetches({
      changes: ['c1', 'c2'],
      due: due('d1', 'd2', 'd3'),
      seen: new Set(['d2']),
      remaining: 5,
    });
    expect(plan).toEqual({
      changes: ['c1', 'c2'],
      deferredChanges: [],
      duePolls: ['d1', 'd3'],
      dueLeft: 0,
      backfillLimit: 1,
    });
  });
  it('defers the changes the budget cannot take, and polls nothing else', () => {
    const plan = planIntentFetches({
      changes: ['c1', 'c2', 'c3'],
      due: due('d1'),
      seen: new Set(),
      remaining: 2,
    });
    expect(plan).toEqual({
      changes: ['c1', 'c2'],
      deferredChanges: ['c3'],
      duePolls: [],
      dueLeft: 1,
      backfillLimit: 0,
    });
  });
  it('fetches one change even when the sweep spent the whole budget (a change is never starved)', () => {
    const plan = planIntentFetches({ changes: ['c1', 'c2'], due: due('d1'), seen: new Set(), remaining: -3 });
    expect(plan).toMatchObject({ changes: ['c1'], deferredChanges: ['c2'], duePolls: [], backfillLimit: 0 });
  });

  it('spends at most what is left (one change aside), keeps every change and the due order', () => {
    const id = fc.integer({ min: 0, max: 30 }).map((n) => `i${n}`);
    fc.assert(
      fc.property(
        fc.uniqueArray(id, { maxLength: 20 }),
        fc.uniqueArray(id, { maxLength: 20 }),
        fc.uniqueArray(id, { maxLength: 20 }),
        fc.integer({ min: -5, max: 40 }),
        (changes, dueIds, seen, remaining) => {
          const plan = planIntentFetches({ changes, due: due(...dueIds), seen: new Set(seen), remaining });
          const spent = plan.changes.length + plan.duePolls.length + plan.backfillLimit;
          expect(spent).toBeLessThanOrEqual(Math.max(remaining, Math.min(1, changes.length), 0));
          expect([...plan.changes, ...plan.deferredChanges]).toEqual(changes);
          const unreached = dueIds.filter((d) => !seen.includes(d));
          expect(plan.duePolls).toEqual(unreached.slice(0, plan.duePolls.length));
          expect(plan.duePolls.length + plan.dueLeft).toBe(unreached.length);
          if (plan.deferredChanges.length > 0) expect(plan.duePolls).toEqual([]);
        },
      ),
    );
  });
});
