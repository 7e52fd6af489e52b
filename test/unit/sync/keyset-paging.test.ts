import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pageAllowance } from '../../../src/records/pagination.js';
import { advanceKeyset, nextKeysetBound, type KeysetCursor } from '../../../src/sync/keyset-paging.js';

describe('nextKeysetBound', () => {
  it('moves below the oldest row seen, keeping ties, and reports no progress', () => {
    expect(nextKeysetBound(1_000, 500)).toBe(501);
    expect(nextKeysetBound(501, 500)).toBeNull();
  });
});

describe('advanceKeyset: where the next page of a newest-first window starts', () => {
  it.each<[string, KeysetCursor, number[], boolean, KeysetCursor]>([
    [
      'the bound moves to the oldest row + 1 ms, page 0',
      { before: 1_000, page: 0 },
      [900, 700, 800],
      false,
      { before: 701, page: 0 },
    ],
    [
      'from a page number too, back to page 0',
      { before: 1_000, page: 2 },
      [990, 950],
      false,
      { before: 951, page: 0 },
    ],
    [
      'a whole page at the bound’s last instant: next page number',
      { before: 1_000, page: 0 },
      [999, 999],
      false,
      { before: 1_000, page: 1 },
    ],
    ['an empty page: next page number', { before: 1_000, page: 3 }, [], false, { before: 1_000, page: 4 }],
    [
      'the last page: the bound stays, the page moves on',
      { before: 1_000, page: 0 },
      [900, 700],
      true,
      { before: 1_000, page: 1 },
    ],
  ])('%s', (_name, cursor, createdAts, done, expected) => {
    expect(advanceKeyset(cursor, createdAts, done)).toEqual(expected);
  });
});

interface Row {
  id: number;
  createdAt: number;
}

/** The feed: rows of [start, before), newest first (ties by id, highest first), `size` per page. */
function servePage(rows: readonly Row[], start: number, cursor: KeysetCursor, size: number) {
  const listed = rows
    .filter((row) => row.createdAt >= start && row.createdAt < cursor.before)
    .sort((a, b) => b.createdAt - a.createdAt || b.id - a.id);
  const records = listed.slice(cursor.page * size, (cursor.page + 1) * size);
  const more = (cursor.page + 1) * size < listed.length;
  return { records, totalCount: listed.length, nextPage: more ? cursor.page + 1 : null };
}

describe('keyset paging of a window reads every row, re-reading only ties (property)', () => {
  const START = 0;
  const END = 100;
  // Few instants for many rows: ties at page boundaries are the common case, not the rare one.
  const rowsOf = (instants: number[]) => instants.map((createdAt, id) => ({ id, createdAt }));

  it('never skips a row, even with rows arriving above the read position between pages', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: START, max: END - 1 }), { maxLength: 60 }),
        fc.integer({ min: 1, max: 7 }),
        fc.array(fc.nat(), { maxLength: 30 }),
        (instants, size, arrivals) => {
          const rows: Row[] = rowsOf(instants);
          const present = new Set(rows.map((row) => row.id));
          const seen = new Set<number>();
          let previous: Row[] = [];
          let cursor: KeysetCursor = { before: END, page: 0 };
          let requests = 0;
          let allowed = 0;
          for (;;) {
            const page = servePage(rows, START, cursor, size);
            requests++;
            // pageToEnd's limit: twice the pages the total_count of any page read implies.
            const pagination = { ...page, totalPages: 0, currentPage: cursor.page, pageSize: size };
            allowed = Math.max(allowed, 2 * pageAllowance(pagination, size));
            expect(requests).toBeLessThanOrEqual(allowed);
            const oldestBefore = Math.min(...previous.map((row) => row.createdAt));
            for (const row of page.records) {
              // A row met again was on the previous page, at its oldest instant (a keyset tie).
              if (seen.has(row.id)) {
                expect(previous.some((p) => p.id === row.id)).toBe(true);
                expect(row.createdAt).toBe(oldestBefore);
              }
              seen.add(row.id);
            }
            const done = page.nextPage === null || page.records.length === 0;
            const next = advanceKeyset(
              cursor,
              page.records.map((row) => row.createdAt),
              done,
            );
            if (done) break;
            // A late row above the next bound (newer than anything still to read) arrives meanwhile.
            const arrival = arrivals[requests - 1];
            if (arrival !== undefined && next.before < END) {
              rows.push({ id: rows.length, createdAt: next.before + (arrival % (END - next.before)) });
            }
            previous = page.records;
            cursor = next;
          }
          for (const id of present) expect(seen.has(id)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});
