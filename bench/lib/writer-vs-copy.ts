import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { sql, type Kysely } from 'kysely';
import type { PartnerApi } from '../../src/api/partner-api.js';
import type { CheckIn } from '../../src/records/index.js';
import { advanceKeyset } from '../../src/sync/keyset-paging.js';
import type { Window } from '../../src/sync/windows.js';
import { CHECKINS_TUNING } from '../../src/streams/checkins/tuning.js';
import { commitCheckInPage } from '../../src/warehouse/check-in-pages.js';
import { insertPlannedWindows } from '../../src/warehouse/sync-windows.js';
import type { DB } from '../../src/warehouse/schema.js';
import type { PostgresPhase } from './bench-postgres.js';

// The writer against Postgres's own floor. The same pages the pipeline reads (same windows,
// same keyset paging, real parsed records) are committed with commitCheckInPage, the
// pipeline's write (rows and checkpoint in one statement; a first read's plain insert,
// CHECKINS_TUNING.firstReadPagesPerWrite pages to a statement), into the empty rewards.check_ins of a fresh database; only those calls are timed. The same rows (deduplicated: ties at page edges come
// twice) go to a CSV file that the server then loads with one `COPY ... FROM '<file>'` into an
// identical empty table (`LIKE ... INCLUDING ALL`: same columns, keys and indexes), three times.

export interface WriterVsCopyResult {
  pages: number;
  rows: number;
  writerMs: number;
  /** The median COPY run's time (copyRuns: every run). */
  copyMs: number;
  copyMethod: string;
  copyRuns: { ms: number; cpuSeconds: number | null }[];
  /** Postgres during the writer's page commits, and during the COPY (bench-postgres.ts). */
  writerPostgres: PostgresPhase | null;
  copyPostgres: PostgresPhase | null;
}

const COPY_RUNS = 3;

interface CopyRun {
  table: string;
  ms: number;
  postgres: PostgresPhase | null;
}

/** Runs a piece of work as a measured Postgres phase (BenchPostgres.phase). */
type Phase = <T>(work: () => Promise<T>) => Promise<{ value: T; postgres: PostgresPhase }>;

/** The columns of csvLine's rows, in order, for `COPY rewards.check_ins (…)`. */
export const COPY_COLUMNS =
  'id, location_id, restaurant_id, svc_pay_enabled, created_at, ended_at, first_seen_at, last_seen_at';

/** One check-in as a CSV line of COPY_COLUMNS, seen at `seenAt` (ISO text). */
export function csvLine(checkIn: CheckIn, seenAt: string): string {
  // Unquoted empty field = NULL in CSV format; every other value here is free of commas and quotes.
  const ended = checkIn.endedAtMs === null ? '' : new Date(checkIn.endedAtMs).toISOString();
  const flag = checkIn.svcPayEnabled ? 't' : 'f';
  return `${checkIn.id},${checkIn.locationId},${checkIn.restaurantId},${flag},${new Date(checkIn.createdAtMs).toISOString()},${ended},${seenAt},${seenAt}\n`;
}

async function* windowPages(api: PartnerApi, window: Window, pageSize: number): AsyncGenerator<CheckIn[]> {
  let before = window.end;
  let page = 0;
  for (;;) {
    const stream = api.checkInPages({
      createdAfter: new Date(window.start),
      createdBefore: new Date(before),
      startPage: page,
      pageSize,
    });
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    await iterator.return?.();
    if (first.done === true) return;
    const result = first.value;
    yield result.records;
    if (result.pagination.nextPage === null || result.records.length + result.rejections.length === 0) return;
    ({ before, page } = advanceKeyset(
      { before, page },
      result.records.map((r) => r.createdAtMs),
      false,
    ));
  }
}

export async function compareWriterWithCopy(options: {
  api: PartnerApi;
  /** A fresh, migrated database: its rewards.check_ins must be empty. */
  db: Kysely<DB>;
  windows: readonly Window[];
  pageSize: number;
  csvPath: string;
  phase?: Phase;
}): Promise<WriterVsCopyResult> {
  const { api, db } = options;
  const phase: Phase =
    options.phase ?? (async (work) => ({ value: await work(), postgres: null as unknown as PostgresPhase }));
  const file = createWriteStream(options.csvPath);
  const seen = new Set<string>();
  let pages = 0;
  let writerMs = 0;
  await insertPlannedWindows(db, options.windows);
  await sql`checkpoint`.execute(db);
  const writing = await phase(async () => {
    for (const window of options.windows) {
      // As the pipeline's first read of a window writes (src/streams/checkins/page-commit.ts): the
      // rows the previous page wrote, read again at the keyset edge, are left out, the rest takes
      // the plain insert, CHECKINS_TUNING.firstReadPagesPerWrite pages to a statement with the
      // last one's checkpoint, and the window's last pages whatever their number.
      let held: { rows: CheckIn[]; records: number; pages: number; seenAt: Date } | null = null;
      const writeHeld = async () => {
        if (held === null) return;
        const { rows, records, pages: heldPages, seenAt } = held;
        held = null;
        const started = performance.now();
        await commitCheckInPage(db, {
          window,
          checkIns: rows,
          expectNewIds: true,
          locations: [],
          rejections: [],
          firstMet: [],
          checkpoint: {
            cursorBefore: new Date(window.start),
            cursorPage: 0,
            rows: records,
            pages: heldPages,
            apiTotalCount: records,
            now: new Date(),
          },
          seenAt,
        });
        writerMs += performance.now() - started;
      };
      for await (const records of windowPages(api, window, options.pageSize)) {
        const seenAt = new Date();
        const fresh = records.filter((record) => !seen.has(record.id));
        held ??= { rows: [], records: 0, pages: 0, seenAt };
        held.rows.push(...fresh);
        held.records += records.length;
        held.pages++;
        pages++;
        if (held.pages >= CHECKINS_TUNING.firstReadPagesPerWrite) await writeHeld();
        const stamp = seenAt.toISOString();
        let chunk = '';
        for (const record of fresh) {
          seen.add(record.id);
          chunk += csvLine(record, stamp);
        }
        if (!file.write(chunk)) await once(file, 'drain');
      }
      await writeHeld();
    }
    // The page writes' dirty buffers are part of their cost, as the COPY's are of its.
    await sql`checkpoint`.execute(db);
  });
  file.end();
  await once(file, 'finish');
  // The server reads the file as its own OS user.
  await chmod(options.csvPath, 0o644);

  // COPY runs COPY_RUNS times, each into its own empty table, and the run with the median time is
  // compared: one COPY is a single 4-5 s statement, and on a shared machine one run of it varied
  // 3.9-5.6 s between bench runs, more than any change to the writer moved it.
  const copyRuns: CopyRun[] = [];
  for (let run = 1; run <= COPY_RUNS; run++) {
    const table = `check_ins_copy_${run}`;
    await sql`create table ${sql.table(`rewards.${table}`)} (like rewards.check_ins including all)`.execute(
      db,
    );
    await sql`checkpoint`.execute(db);
    let ms = 0;
    const copying = await phase(async () => {
      const started = performance.now();
      await sql
        .raw(
          `copy rewards.${table} (${COPY_COLUMNS}) from '${options.csvPath.replaceAll("'", "''")}' with (format csv)`,
        )
        .execute(db);
      ms = performance.now() - started;
      await sql`checkpoint`.execute(db);
    });
    copyRuns.push({ table, ms, postgres: options.phase === undefined ? null : copying.postgres });
  }
  const median = [...copyRuns].sort((a, b) => a.ms - b.ms)[Math.floor(COPY_RUNS / 2)]!;

  for (const table of ['check_ins', ...copyRuns.map((run) => run.table)]) {
    const { rows } = await sql<{
      n: string;
    }>`select count(*) as n from ${sql.table(`rewards.${table}`)}`.execute(db);
    if (Number(rows[0]?.n) !== seen.size)
      throw new Error(
        `writer and COPY disagree: rewards.${table} holds ${rows[0]?.n} rows, ${seen.size} distinct rows read`,
      );
  }
  return {
    pages,
    rows: seen.size,
    writerMs,
    copyMs: median.ms,
    copyMethod: `server-side COPY FROM file (CSV in /tmp), one statement; the median of ${COPY_RUNS} runs`,
    copyRuns: copyRuns.map((run) => ({ ms: run.ms, cpuSeconds: run.postgres?.cpuSeconds ?? null })),
    writerPostgres: options.phase === undefined ? null : writing.postgres,
    copyPostgres: median.postgres,
  };
}
