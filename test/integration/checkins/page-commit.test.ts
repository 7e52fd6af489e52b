import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFeedCheckIn, type CheckIn } from '../../../src/records/index.js';
import { commitCheckInPage, type CheckInPageCommit } from '../../../src/warehouse/check-in-pages.js';
import { insertPlannedWindows, loadWindow } from '../../../src/warehouse/sync-windows.js';
import { createTestDatabase, whileRowRefused, type TestDatabase } from '../../helpers/db.js';
import { feedCheckIn } from '../../unit/records/fixtures.js';

const window = { start: Date.parse('2024-05-01T18:00:00Z'), end: Date.parse('2024-05-01T19:00:00Z') };
const seenAt = new Date('2024-05-02T00:00:00Z');

function checkIns(count: number): CheckIn[] {
  return Array.from({ length: count }, (_, i) => {
    const parsed = parseFeedCheckIn({
      ...feedCheckIn(),
      id: randomUUID(),
      created_at: `2024-05-01T18:${String(i % 60).padStart(2, '0')}:00Z`,
    });
    if (!parsed.ok) throw new Error(parsed.rejection.reason);
    return parsed.record;
  });
}

function page(rows: CheckIn[], overrides: Partial<CheckInPageCommit> = {}): CheckInPageCommit {
  return {
    window,
    checkIns: rows,
    locations: [],
    rejections: [],
    firstMet: [],
    checkpoint: {
      cursorBefore: new Date(window.start + 60_000),
      cursorPage: 0,
      rows: rows.length,
      apiTotalCount: 99,
      firstTotalCount: 99,
      now: seenAt,
    },
    seenAt,
    ...overrides,
  };
}

describe('a check-in page commits its rows and its checkpoint together', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase('page_commit');
    await insertPlannedWindows(t.db, [window]);
  });
  afterAll(async () => t.drop());

  const stored = async () =>
    Number(
      (
        await t.db
          .selectFrom('rewards.check_ins')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('a page of check-ins only (one statement) stores the rows and moves the checkpoint', async () => {
    await commitCheckInPage(t.db, page(checkIns(3)));
    expect(await stored()).toBe(3);
    const row = await loadWindow(t.db, window);
    expect(row).toMatchObject({ pages: 1, rows_seen: 3, first_total_count: 99, cursor_page: 0 });
    expect(row?.cursor_before).toEqual(new Date(window.start + 60_000));
  });

  it('when the database refuses one row, neither the page nor its checkpoint is stored', async () => {
    const rows = checkIns(4);
    for (const overrides of [{}, { locations: [rows[0]!.location] }]) {
      await expect(
        whileRowRefused(t.db, { table: 'check_ins', id: rows[2]!.id, sqlstate: '22003' }, () =>
          commitCheckInPage(t.db, page(rows, overrides)),
        ),
      ).rejects.toMatchObject({ code: '22003' });
      expect(await stored()).toBe(3);
      expect(await loadWindow(t.db, window)).toMatchObject({ pages: 1, rows_seen: 3 });
    }
  });

  it('an empty page with rejections only records them with the checkpoint', async () => {
    const rejection = { recordId: 'not-a-uuid', reason: 'id: not a UUID', payload: { id: 'not-a-uuid' } };
    await commitCheckInPage(t.db, page([], { rejections: [rejection], firstMet: [rejection] }));
    expect(await loadWindow(t.db, window)).toMatchObject({ pages: 2, rows_seen: 3, rows_rejected: 1 });
    const rejected = await t.db.selectFrom('rewards.rejected_records').select('record_id').execute();
    expect(rejected).toEqual([{ record_id: 'not-a-uuid' }]);
  });

  it('keeps the stale-write guard: an older read changes nothing, and a known end is never unset', async () => {
    const [visit] = checkIns(1);
    const ended = { ...visit!, endedAtMs: Date.parse('2024-05-01T19:30:00Z'), svcPayEnabled: true };
    const older = new Date(seenAt.getTime() - 60_000);
    const newer = new Date(seenAt.getTime() + 60_000);
    const at = (when: Date, rows: CheckIn[]) =>
      page(rows, { seenAt: when, checkpoint: { ...page(rows).checkpoint, now: when } });
    const storedVisit = () =>
      t.db
        .selectFrom('rewards.check_ins')
        .select(['ended_at', 'svc_pay_enabled', 'last_seen_at'])
        .where('id', '=', visit!.id)
        .executeTakeFirstOrThrow();

    await commitCheckInPage(t.db, at(seenAt, [ended]));
    await commitCheckInPage(t.db, at(older, [{ ...visit!, endedAtMs: null, svcPayEnabled: false }]));
    expect(await storedVisit()).toEqual({
      ended_at: new Date(ended.endedAtMs),
      svc_pay_enabled: true,
      last_seen_at: seenAt,
    });

    await commitCheckInPage(t.db, at(newer, [{ ...visit!, endedAtMs: null, svcPayEnabled: false }]));
    expect(await storedVisit()).toEqual({
      ended_at: new Date(ended.endedAtMs),
      svc_pay_enabled: false,
      last_seen_at: newer,
    });
  });

  it('a page expected new takes the plain insert; an id already stored (moved here) makes it take the upsert, with the same result', async () => {
    const rows = checkIns(3);
    expect(await commitCheckInPage(t.db, page(rows, { expectNewIds: true }))).toEqual({
      heldIds: false,
      written: true,
    });
    const [first] = rows;
    // The same visit read again with another start (moved within the window) and an end, beside a new one.
    const moved = {
      ...first!,
      createdAtMs: Date.parse('2024-05-01T18:59:00Z'),
      endedAtMs: Date.parse('2024-05-01T20:00:00Z'),
    };
    const later = new Date(seenAt.getTime() + 60_000);
    const [fresh] = checkIns(1);
    const result = await commitCheckInPage(
      t.db,
      page([moved, fresh!], {
        expectNewIds: true,
        seenAt: later,
        checkpoint: { ...page([]).checkpoint, now: later },
      }),
    );
    expect(result).toEqual({ heldIds: true, written: true });
    const copies = await t.db
      .selectFrom('rewards.check_ins')
      .select(['created_at', 'ended_at', 'first_seen_at', 'last_seen_at'])
      .where('id', '=', first!.id)
      .execute();
    expect(copies).toEqual([
      {
        created_at: new Date(moved.createdAtMs),
        ended_at: new Date(moved.endedAtMs),
        first_seen_at: seenAt,
        last_seen_at: later,
      },
    ]);
    const { rows: directory } = await sql<{ created_at: Date }>`
      select created_at from rewards.check_in_ids where id in (${first!.id}, ${fresh!.id})`.execute(t.db);
    expect(directory.map((d) => d.created_at.getTime()).sort()).toEqual(
      [moved.createdAtMs, fresh!.createdAtMs].sort(),
    );
  });
});
