import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  inResyncRange,
  overlapsResyncRange,
  planIntentResync,
  resyncRangeProblem,
  windowsToResync,
  type ResyncRange,
} from '../../../src/sync/resync-plan.js';
import { windowKey, type Window } from '../../../src/sync/windows.js';

const H = 3_600_000;
const range = (from: number | null, to: number | null): ResyncRange => ({ from, to });

describe('resync: which check-in windows are re-paged', () => {
  const windows: Window[] = [
    { start: 0, end: H },
    { start: H, end: 2 * H },
    { start: 2 * H, end: 3 * H },
    { start: 3 * H, end: 4 * H },
  ];

  it.each([
    ['every window when the range is open', range(null, null), [0, 1, 2, 3]],
    ['windows inside the range', range(H, 3 * H), [1, 2]],
    ['a window only partly inside the range is re-paged whole', range(H + 1, 3 * H - 1), [1, 2]],
    ['half-open: a window ending at `from` is not in it', range(2 * H, null), [2, 3]],
    ['half-open: a window starting at `to` is not in it', range(null, 2 * H), [0, 1]],
    ['nothing when the range falls between no windows', range(5 * H, 6 * H), []],
    ['nothing when the range is empty (from at or after to)', range(3 * H, H), []],
  ])('%s', (_rule, r, expected) => {
    expect(windowsToResync(windows, r, new Set())).toEqual(expected.map((i) => windows[i]));
  });

  it('windows this re-sync already re-paged are not taken again', () => {
    const done = new Set([windowKey(windows[1]!)]);
    expect(windowsToResync(windows, range(0, 4 * H), done)).toEqual([windows[0], windows[2], windows[3]]);
  });

  it('a window merged or split by the planner has a new key and is re-paged again', () => {
    const done = new Set([windowKey({ start: 0, end: H / 2 }), windowKey({ start: H / 2, end: H })]);
    expect(windowsToResync([{ start: 0, end: H }], range(null, null), done)).toEqual([{ start: 0, end: H }]);
  });

  it('oldest first, whatever order the rows came in', () => {
    const shuffled = [windows[3]!, windows[0]!, windows[2]!, windows[1]!];
    expect(windowsToResync(shuffled, range(null, null), new Set())).toEqual(windows);
  });

  it('property: a window is re-paged exactly when it shares an instant with the range and is not done', () => {
    const arbWindow = fc
      .tuple(fc.integer({ min: 0, max: 1_000 }), fc.integer({ min: 1, max: 100 }))
      .map(([start, length]) => ({ start, end: start + length }));
    fc.assert(
      fc.property(
        fc.array(arbWindow, { maxLength: 20 }),
        fc.option(fc.integer({ min: 0, max: 1_100 }), { nil: null }),
        fc.option(fc.integer({ min: 0, max: 1_100 }), { nil: null }),
        fc.array(fc.nat({ max: 19 }), { maxLength: 5 }),
        (list, from, to, doneIndexes) => {
          const r = range(from, to);
          const done = new Set(doneIndexes.flatMap((i) => (list[i] ? [windowKey(list[i])] : [])));
          const chosen = windowsToResync(list, r, done);
          for (const window of list) {
            let sharesInstant = false;
            for (let t = window.start; t < window.end; t++) if (inResyncRange(t, r)) sharesInstant = true;
            const expected = sharesInstant && !done.has(windowKey(window));
            expect(chosen.includes(window)).toBe(expected);
            expect(overlapsResyncRange(window, r)).toBe(sharesInstant);
          }
        },
      ),
    );
  });
});

describe('resync: which payment intents are re-read', () => {
  const stored = [
    { id: 'c', createdAt: 3 * H },
    { id: 'a', createdAt: H },
    { id: 'b', createdAt: H },
    { id: 'z', createdAt: null },
    { id: 'd', createdAt: 4 * H },
  ];

  it('every stored intent created in the range, oldest first, ties by id', () => {
    expect(planIntentResync(stored, range(H, 4 * H))).toEqual({ ids: ['a', 'b', 'c'], undated: 1 });
  });

  it('with no range: every stored intent, the undated ones last', () => {
    expect(planIntentResync(stored, range(null, null))).toEqual({
      ids: ['a', 'b', 'c', 'd', 'z'],
      undated: 0,
    });
  });

  it('an intent without created_at belongs to no range: counted, not re-read', () => {
    expect(planIntentResync(stored, range(null, 2 * H))).toEqual({ ids: ['a', 'b'], undated: 1 });
  });

  it('property: each stored intent is re-read at most once, and exactly when it is in the range', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.record({ id: fc.uuid(), createdAt: fc.option(fc.integer({ min: 0, max: 100 }), { nil: null }) }),
          { selector: (intent) => intent.id, maxLength: 30 },
        ),
        fc.option(fc.integer({ min: 0, max: 100 }), { nil: null }),
        fc.option(fc.integer({ min: 0, max: 100 }), { nil: null }),
        (list, from, to) => {
          const r = range(from, to);
          const plan = planIntentResync(list, r);
          expect(new Set(plan.ids).size).toBe(plan.ids.length);
          const open = from === null && to === null;
          for (const intent of list) {
            const expected = intent.createdAt === null ? open : inResyncRange(intent.createdAt, r);
            expect(plan.ids.includes(intent.id)).toBe(expected);
          }
        },
      ),
    );
  });
});

describe('resync: the range given on the command line', () => {
  const latest = 10 * H;
  it.each([
    ['an open range is fine', range(null, null), latest, null],
    ['from before to is fine', range(H, 2 * H), latest, null],
    ['from at to is refused', range(2 * H, 2 * H), latest, '--from must be before --to'],
    [
      'from after the newest closed instant is refused for check-ins',
      range(11 * H, null),
      latest,
      '--from must be before --to',
    ],
    [
      'from after to without check-ins is still refused',
      range(3 * H, 2 * H),
      null,
      '--from must be before --to',
    ],
    ['to in the future is fine without check-ins', range(null, 20 * H), null, null],
  ])('%s', (_rule, r, latestClosed, problem) => {
    expect(resyncRangeProblem(r, latestClosed)).toBe(problem);
  });

  it('to after now minus CHECKINS_SAFETY_LAG is refused for check-ins, naming the setting', () => {
    expect(resyncRangeProblem(range(null, 11 * H), latest)).toMatch(/CHECKINS_SAFETY_LAG/);
  });
});
