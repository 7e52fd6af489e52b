import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sql, type Kysely } from 'kysely';
import { parseFeedCheckIn, type CheckIn } from '../../src/records/index.js';
import { commitCheckInPage } from '../../src/warehouse/check-in-pages.js';
import { settleRollupOfWindow } from '../../src/warehouse/check-ins-daily.js';
import { createDatabase } from '../../src/warehouse/database.js';
import type { DB } from '../../src/warehouse/schema.js';
import { insertPlannedWindows } from '../../src/warehouse/sync-windows.js';
import { feedCheckIn } from '../../test/unit/records/fixtures.js';

// One venue with `perDay` check-ins in one UTC day, paged newest first in pages of `pageSize` into
// one window, each page committed as the pipeline does (commitCheckInPage: rows, rollup triggers,
// checkpoint). A page's cost must not grow with what its (day, location) group already holds
// (issue 39: the rollup once recomputed the group's median from all its rows on every page, so
// a busy venue's day cost the square of its check-ins). Then the window's one settle step.
//
// The pages go through one connection, and each page's cost is read twice: its wall time, and
// the CPU its Postgres backend spent on it (/proc/<pid>/schedstat, nanoseconds on a CPU): on a
// shared machine the wall time mostly measures the queue for the cores, the CPU time does not.
// The figure is the CPU one.

export interface BusyVenueResult {
  perDay: number;
  pages: number;
  /** Microseconds per row of each page's commit (wall), in paging order. */
  microsPerRow: number[];
  /** Microseconds of Postgres backend CPU per row of each page, in paging order. */
  backendMicrosPerRow: number[];
  /** Median of the first three pages' backend µs/row, and of the last three. */
  firstMicrosPerRow: number;
  lastMicrosPerRow: number;
  lastVsFirst: number;
  /** The same ratio by wall time (noisy on a shared machine). */
  wallLastVsFirst: number;
  /** The settle of the day's medians after the window (one statement). */
  settleMs: number;
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

/** CPU nanoseconds the process `pid` has run so far (first field of /proc/<pid>/schedstat). */
function cpuNanos(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
}

export async function measureBusyVenue(options: {
  /** The database's URL: the pages go through a connection of their own. */
  url: string;
  perDay: number;
  pageSize: number;
  day: Date;
}): Promise<BusyVenueResult> {
  const db: Kysely<DB> = createDatabase({ url: options.url, maxConnections: 1 });
  try {
    return await measureOn(db, options);
  } finally {
    await db.destroy();
  }
}

async function measureOn(
  db: Kysely<DB>,
  options: { perDay: number; pageSize: number; day: Date },
): Promise<BusyVenueResult> {
  const { perDay, pageSize } = options;
  const { rows: backend } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db);
  const pid = backend[0]!.pid;
  const parsed = parseFeedCheckIn(feedCheckIn());
  if (!parsed.ok) throw new Error(parsed.rejection.reason);
  const base = parsed.record;
  const dayStart = Date.UTC(
    options.day.getUTCFullYear(),
    options.day.getUTCMonth(),
    options.day.getUTCDate(),
  );
  const window = { start: dayStart, end: dayStart + 86_400_000 };
  await sql`select rewards.create_check_ins_month(${new Date(dayStart).toISOString().slice(0, 10)}::date)`.execute(
    db,
  );
  await insertPlannedWindows(db, [window]);
  // Newest first, as the feed pages; most visits ended (each one moves the group's median).
  const spacing = 86_400_000 / perDay;
  const rows = Array.from({ length: perDay }, (_, i): CheckIn => {
    const createdAtMs = window.end - Math.ceil((i + 1) * spacing);
    return {
      ...base,
      id: randomUUID(),
      createdAtMs,
      endedAtMs: i % 10 === 0 ? null : createdAtMs + (20 + (i % 97)) * 60_000,
      svcPayEnabled: i % 3 === 0,
    };
  });
  const microsPerRow: number[] = [];
  const backendMicrosPerRow: number[] = [];
  for (let offset = 0; offset < rows.length; offset += pageSize) {
    const page = rows.slice(offset, offset + pageSize);
    const seenAt = new Date();
    const cpuBefore = cpuNanos(pid);
    const started = performance.now();
    await commitCheckInPage(db, {
      window,
      checkIns: page,
      locations: [],
      rejections: [],
      firstMet: [],
      checkpoint: {
        cursorBefore: new Date(page.at(-1)!.createdAtMs),
        cursorPage: 0,
        rows: page.length,
        apiTotalCount: perDay,
        now: seenAt,
      },
      seenAt,
    });
    microsPerRow.push(((performance.now() - started) * 1000) / page.length);
    backendMicrosPerRow.push((cpuNanos(pid) - cpuBefore) / 1000 / page.length);
  }
  await db
    .updateTable('rewards.sync_windows')
    .set({ status: 'complete' })
    .where('window_start', '=', new Date(window.start))
    .execute();
  const settleStarted = performance.now();
  await settleRollupOfWindow(db, { start: new Date(window.start), end: new Date(window.end) });
  const settleMs = performance.now() - settleStarted;
  // The figure means something only if the rows landed in the venue's day with their ends (a
  // record's fields renamed once left every row at the fixture's instant, and the case passed).
  const { rows: stored } = await sql<{ rows: number; ended: number }>`
    select count(*)::int as rows, count(ended_at)::int as ended from rewards.check_ins
    where created_at >= ${new Date(window.start)} and created_at < ${new Date(window.end)}`.execute(db);
  const expectedEnded = rows.filter((row) => row.endedAtMs !== null).length;
  if (stored[0]?.rows !== perDay || stored[0].ended !== expectedEnded)
    throw new Error(
      `busy venue: ${JSON.stringify(stored[0])} stored in its day, expected ${perDay} rows, ${expectedEnded} ended`,
    );
  const firstMicrosPerRow = median(backendMicrosPerRow.slice(0, 3));
  const lastMicrosPerRow = median(backendMicrosPerRow.slice(-3));
  const round = (value: number) => Math.round(value * 10) / 10;
  return {
    perDay,
    pages: microsPerRow.length,
    microsPerRow: microsPerRow.map(round),
    backendMicrosPerRow: backendMicrosPerRow.map(round),
    firstMicrosPerRow,
    lastMicrosPerRow,
    lastVsFirst: lastMicrosPerRow / firstMicrosPerRow,
    wallLastVsFirst: median(microsPerRow.slice(-3)) / median(microsPerRow.slice(0, 3)),
    settleMs,
  };
}
