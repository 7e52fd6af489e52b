import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from '../../../src/api/paging.js';
import { parseFeedCheckIn, type CheckIn } from '../../../src/records/index.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { WindowPageCommitter } from '../../../src/streams/checkins/page-commit.js';
import { commitCheckInPage } from '../../../src/warehouse/check-in-pages.js';
import { CHECKINS_TUNING } from '../../../src/streams/checkins/tuning.js';
import { insertPlannedWindows, loadWindow } from '../../../src/warehouse/sync-windows.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { createPipelineHarness, type PipelineHarness } from '../../helpers/pipeline.js';
import { feedCheckIn } from '../../unit/records/fixtures.js';

// A window's first read holds its plain pages and writes CHECKINS_TUNING.firstReadPagesPerWrite of
// them in one statement with the last one's checkpoint (src/streams/checkins/page-commit.ts). What
// a crash between two writes leaves must resume with no gap and no duplicate.

const window = { start: Date.parse('2024-05-01T18:00:00Z'), end: Date.parse('2024-05-01T19:00:00Z') };
/** A second window, for the read whose held pages meet an id already stored. */
const movedWindow = { start: Date.parse('2024-05-01T19:00:00Z'), end: Date.parse('2024-05-01T20:00:00Z') };
const PAGE_ROWS = 5;
/** Pages written in one statement. */
const HELD = CHECKINS_TUNING.firstReadPagesPerWrite;
/** A page written alone, one full write, one page held at the crash and the last page. */
const PAGES = HELD + 3;

/** Pages of five check-ins, newest first, one minute apart, all at the fixture's location. */
function feedPages(hour = 18): { page: Page<CheckIn>; nextBefore: number }[] {
  const pages: { page: Page<CheckIn>; nextBefore: number }[] = [];
  for (let p = 0; p < PAGES; p++) {
    const records = Array.from({ length: PAGE_ROWS }, (_, i) => {
      const minute = 59 - (p * PAGE_ROWS + i);
      const parsed = parseFeedCheckIn({
        ...feedCheckIn(),
        id: randomUUID(),
        created_at: `2024-05-01T${hour}:${String(minute).padStart(2, '0')}:00Z`,
      });
      if (!parsed.ok) throw new Error(parsed.rejection.reason);
      return parsed.record;
    });
    pages.push({
      page: {
        records,
        rejections: [],
        pagination: {
          totalCount: PAGES * PAGE_ROWS,
          totalPages: PAGES,
          currentPage: 0,
          nextPage: p < PAGES - 1 ? 1 : null,
          pageSize: PAGE_ROWS,
        },
      },
      nextBefore: records.at(-1)!.createdAtMs,
    });
  }
  return pages;
}

describe("a window's first read writes its plain pages several at a time", () => {
  let sim: RunningSimulator;
  let t: TestDatabase;
  let h: PipelineHarness;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 3, checkIns: 10, anchor: new Date(window.end), days: 1 });
    t = await createTestDatabase('held_pages');
    h = createPipelineHarness({ sim, db: t.db, label: 'held-pages' });
    await insertPlannedWindows(t.db, [window, movedWindow]);
  });
  afterAll(async () => {
    await h?.close();
    await t?.drop();
    await sim?.close();
  });

  const storedIds = async () =>
    (await t.db.selectFrom('rewards.check_ins').select('id').execute()).map((row) => row.id);
  const checkpoint = async () => {
    const row = await loadWindow(t.db, window);
    return { pages: row?.pages, rowsSeen: row?.rows_seen, cursorBefore: row?.cursor_before?.getTime() };
  };

  it('holds pages until a full write, checkpoints its last, and a read resumed after a crash stores the rest once', async () => {
    expect(HELD).toBeGreaterThan(1);
    expect(PAGES * PAGE_ROWS).toBeLessThanOrEqual(60); // one a minute, in the window's hour
    const pages = feedPages();
    const commit = (committer: WindowPageCommitter, index: number, firstOfAttempt = false) => {
      const { page, nextBefore } = pages[index]!;
      return committer.commit(page, {
        seenAt: new Date(),
        next: { before: nextBefore, page: 0 },
        firstOfAttempt,
        last: index === PAGES - 1,
      });
    };

    const first = new WindowPageCommitter(h.deps, window, { firstRead: true });
    // Page 1 brings a location not yet written: it is written alone, with its checkpoint.
    expect(await commit(first, 0, true)).toBe(PAGE_ROWS);
    expect(await checkpoint()).toEqual({
      pages: 1,
      rowsSeen: PAGE_ROWS,
      cursorBefore: pages[0]!.nextBefore,
    });
    // The next HELD - 1 pages are held: nothing written, the checkpoint stays.
    for (let index = 1; index < HELD; index++) expect(await commit(first, index)).toBe(0);
    expect(await storedIds()).toHaveLength(PAGE_ROWS);
    expect((await checkpoint()).pages).toBe(1);
    // The next page makes HELD held: one write, that page's checkpoint.
    expect(await commit(first, HELD)).toBe(HELD * PAGE_ROWS);
    expect(await checkpoint()).toEqual({
      pages: HELD + 1,
      rowsSeen: (HELD + 1) * PAGE_ROWS,
      cursorBefore: pages[HELD]!.nextBefore,
    });
    // One more page is held, then the process dies: it was never checkpointed, nor stored.
    expect(await commit(first, HELD + 1)).toBe(0);
    expect(await storedIds()).toHaveLength((HELD + 1) * PAGE_ROWS);

    // The read resumes from the checkpoint with a new committer; the last page writes whatever is
    // held.
    const resumed = new WindowPageCommitter(h.deps, window, { firstRead: true });
    expect(await commit(resumed, HELD + 1)).toBe(0);
    expect(await commit(resumed, HELD + 2)).toBe(2 * PAGE_ROWS);
    const ids = await storedIds();
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(new Set(pages.flatMap(({ page }) => page.records.map((r) => r.id))));
    expect(await checkpoint()).toEqual({
      pages: PAGES,
      rowsSeen: PAGES * PAGE_ROWS,
      cursorBefore: pages[HELD + 2]!.nextBefore,
    });
  });
  it('held pages that meet an id already stored are written one by one, each stamped with its own read time', async () => {
    const pages = feedPages(19);
    // Page 3's second check-in is already stored (an id another window wrote, moved here since).
    const stored = pages[2]!.page.records[1]!;
    await commitCheckInPage(t.db, {
      window: movedWindow,
      checkIns: [{ ...stored, endedAtMs: null }],
      locations: [],
      rejections: [],
      firstMet: [],
      checkpoint: {
        cursorBefore: new Date(movedWindow.end),
        cursorPage: 0,
        rows: 0,
        apiTotalCount: 0,
        now: new Date(0),
      },
      seenAt: new Date(0),
    });
    const committer = new WindowPageCommitter(h.deps, movedWindow, { firstRead: true });
    const readAt = pages.map((_, i) => new Date(Date.UTC(2024, 4, 2, 0, 0, i)));
    let total = 0;
    for (const [index, { page, nextBefore }] of pages.entries())
      total += await committer.commit(page, {
        seenAt: readAt[index]!,
        next: { before: nextBefore, page: 0 },
        firstOfAttempt: index === 0,
        last: index === PAGES - 1,
      });
    expect(total).toBe(PAGES * PAGE_ROWS);
    const rows = await t.db
      .selectFrom('rewards.check_ins')
      .select(['id', 'last_seen_at', 'ended_at'])
      .where('created_at', '>=', new Date(movedWindow.start))
      .where('created_at', '<', new Date(movedWindow.end))
      .execute();
    expect(rows).toHaveLength(PAGES * PAGE_ROWS);
    const lastSeen = new Map(rows.map((row) => [row.id, row.last_seen_at.getTime()]));
    // The stored id took this read's values (its end), stamped with its page's read time.
    expect(rows.find((row) => row.id === stored.id)?.ended_at).toEqual(
      stored.endedAtMs === null ? null : new Date(stored.endedAtMs),
    );
    for (const [index, { page }] of pages.entries()) {
      if (index >= 1 && index <= HELD)
        for (const record of page.records)
          expect(lastSeen.get(record.id), `page ${index + 1}`).toBe(readAt[index]!.getTime());
    }
    const row = await loadWindow(t.db, movedWindow);
    expect({ pages: row?.pages, rowsSeen: row?.rows_seen }).toEqual({
      pages: PAGES + 1, // the setup's own write took a checkpoint too
      rowsSeen: PAGES * PAGE_ROWS,
    });
  });
});
