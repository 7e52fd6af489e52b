// Where a first-read page write's Postgres time goes, against COPY (issue 39: writer ÷ COPY ≤ 1.5).
//   node --import tsx bench/write-path-parts.ts [--rows 50000] [--locations 44] [--rounds 3]
//
// The same generated rows (newest first, pages of 500, `--locations` venues, so about that many
// (day, location) groups a page: 44 in a simulator feed page) are written by each variant into
// the bench's own throw-away PostgreSQL (bench/lib/bench-postgres.ts: production durability, no
// autovacuum), tables truncated and CHECKPOINT before, CHECKPOINT after (its dirty buffers are
// part of its cost). Variants run interleaved, round after round, so a busy machine weighs on all
// of them alike; the figure is the cluster's CPU per row (every Postgres process: backends,
// checkpointer, WAL writer), median over the rounds, and its ratio to one COPY (the comparator of
// bench/checkins.ts's "writer ÷ COPY"). Not part of `npm run bench`: a diagnosis, not a goal.

import { randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { sql, type Kysely } from 'kysely';
import type { CheckIn } from '../src/records/index.js';
import { checkInInsert } from '../src/warehouse/check-ins.js';
import type { DB } from '../src/warehouse/schema.js';
import { createBenchDatabase } from './lib/bench-database.js';
import { startBenchPostgres, type BenchPostgres } from './lib/bench-postgres.js';
import { COPY_COLUMNS, csvLine } from './lib/writer-vs-copy.js';

const PAGE = 500;
const DAY_MS = 86_400_000;

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '50000' },
    locations: { type: 'string', default: '44' },
    rounds: { type: 'string', default: '3' },
  },
});
const ROWS = Number(args.rows);
const LOCATIONS = Number(args.locations);
const ROUNDS = Number(args.rounds);
for (const [name, value] of [
  ['rows', ROWS],
  ['locations', LOCATIONS],
  ['rounds', ROUNDS],
] as const)
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive whole number`);

const START_MS = Date.UTC(2026, 9, 1);

function generateRows(): CheckIn[] {
  const venues = Array.from({ length: LOCATIONS }, () => ({
    location: randomUUID(),
    restaurant: randomUUID(),
  }));
  return Array.from({ length: ROWS }, (_, i) => {
    const createdMs = START_MS + 5 * DAY_MS - Math.floor((i / ROWS) * 5 * DAY_MS);
    const venue = venues[Math.floor(Math.random() * LOCATIONS)]!;
    return {
      id: randomUUID(),
      locationId: venue.location,
      restaurantId: venue.restaurant,
      svcPayEnabled: i % 3 === 0,
      createdAtMs: createdMs,
      endedAtMs: i % 10 === 0 ? null : createdMs + 50 * 60_000,
      extra: null,
    } as CheckIn;
  });
}

/** CSV files the server reads: every row, and each page's rows and directory rows. */
function writeCsvFiles(rows: readonly CheckIn[], seenAt: Date, dir: string): void {
  const seen = seenAt.toISOString();
  const line = (c: CheckIn) => csvLine(c, seen);
  const write = (name: string, text: string) => {
    writeFileSync(`${dir}/${name}`, text);
    chmodSync(`${dir}/${name}`, 0o644); // the server reads them as its own user
  };
  write('all.csv', rows.map(line).join(''));
  for (let i = 0; i < rows.length; i += PAGE) {
    const page = rows.slice(i, i + PAGE);
    write(`page-${i}.csv`, page.map(line).join(''));
    write(`ids-${i}.csv`, page.map((c) => `${c.id},${new Date(c.createdAtMs).toISOString()}\n`).join(''));
  }
}

interface Variant {
  name: string;
  run(db: Kysely<DB>, rows: readonly CheckIn[], seenAt: Date, dir: string): Promise<void>;
}

const pageStarts = (rows: readonly CheckIn[], size: number) =>
  Array.from({ length: Math.ceil(rows.length / size) }, (_, i) => i * size);

/** The pipeline's first-read statement (checkInInsert), `pages` pages per statement. */
async function insertPages(db: Kysely<DB>, rows: readonly CheckIn[], seenAt: Date, pages: number) {
  for (const start of pageStarts(rows, PAGE * pages)) {
    const write = checkInInsert(rows.slice(start, start + PAGE * pages), seenAt);
    if (write === null) continue;
    await sql`with ${sql.join(write.ctes)}
      select (select count(*) from new_check_ins), set_config('synchronous_commit', 'off', true)`.execute(db);
  }
}

async function withTriggersOff(db: Kysely<DB>, work: () => Promise<void>) {
  await sql`alter table rewards.check_ins disable trigger user`.execute(db);
  try {
    await work();
  } finally {
    await sql`alter table rewards.check_ins enable trigger user`.execute(db);
  }
}

/** A server-side COPY of one of the run's CSV files (the server reads them as its own user). */
const copyFrom = (table: string, file: string, columns = COPY_COLUMNS) =>
  `copy ${table} (${columns}) from '${file}' with (format csv)`;

const VARIANTS: Variant[] = [
  {
    name: 'one COPY into a LIKE table (the comparator)',
    async run(db, _rows, _seenAt, dir) {
      await sql.raw(copyFrom('rewards.check_ins_copy', `${dir}/all.csv`)).execute(db);
    },
  },
  {
    name: 'COPY per page into a LIKE table',
    async run(db, rows, _seenAt, dir) {
      for (const start of pageStarts(rows, PAGE))
        await sql.raw(copyFrom('rewards.check_ins_copy', `${dir}/page-${start}.csv`)).execute(db);
    },
  },
  {
    name: 'COPY per page into check_ins + directory',
    async run(db, rows, _seenAt, dir) {
      for (const start of pageStarts(rows, PAGE)) {
        const ids = copyFrom('rewards.check_in_ids', `${dir}/ids-${start}.csv`, 'id, created_at');
        const checkIns = copyFrom('rewards.check_ins', `${dir}/page-${start}.csv`);
        await sql.raw(`begin; set local synchronous_commit = off; ${ids}; ${checkIns}; commit`).execute(db);
      }
    },
  },
  {
    name: 'page statement (checkInInsert), as shipped',
    run: (db, rows, seenAt) => insertPages(db, rows, seenAt, 1),
  },
  {
    name: 'page statement, rollup triggers off',
    run: (db, rows, seenAt) => withTriggersOff(db, () => insertPages(db, rows, seenAt, 1)),
  },
  {
    name: 'page statement without the id directory',
    async run(db, rows, seenAt) {
      for (const start of pageStarts(rows, PAGE)) {
        const write = checkInInsert(rows.slice(start, start + PAGE), seenAt);
        if (write === null) continue;
        // Only the page's rows CTE, then check_ins alone.
        await sql`with ${write.ctes[0]!}
          insert into rewards.check_ins
            (id, location_id, restaurant_id, svc_pay_enabled, created_at, ended_at, extra, first_seen_at, last_seen_at)
          select t.*, ${seenAt}::timestamptz, ${seenAt}::timestamptz from page_check_ins t`.execute(db);
      }
    },
  },
  {
    name: '4 pages per statement',
    run: (db, rows, seenAt) => insertPages(db, rows, seenAt, 4),
  },
  {
    name: '8 pages per statement (a first read, as shipped)',
    run: (db, rows, seenAt) => insertPages(db, rows, seenAt, 8),
  },
];

async function measure(
  postgres: BenchPostgres,
  db: Kysely<DB>,
  variant: Variant,
  rows: readonly CheckIn[],
  seenAt: Date,
  dir: string,
): Promise<{ cpuMicrosPerRow: number; wallMicrosPerRow: number; walBytesPerRow: number }> {
  await sql`truncate rewards.check_ins, rewards.check_in_ids, rewards.check_ins_daily_rollup,
    rewards.check_ins_first_seen_hourly, rewards.check_ins_copy`.execute(db);
  await sql`checkpoint`.execute(db);
  const started = performance.now();
  const { postgres: phase } = await postgres.phase(async () => {
    await variant.run(db, rows, seenAt, dir);
    await sql`checkpoint`.execute(db);
  });
  const wallMs = performance.now() - started;
  return {
    cpuMicrosPerRow: (phase.cpuSeconds * 1e6) / rows.length,
    wallMicrosPerRow: (wallMs * 1000) / rows.length,
    walBytesPerRow: phase.walBytes / rows.length,
  };
}

const median = (values: readonly number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const postgres = await startBenchPostgres();
  const dir = `/tmp/rewards-etl-write-parts-${randomUUID().slice(0, 8)}`;
  const bench = await createBenchDatabase(postgres.url, 'parts');
  try {
    const { db } = bench;
    await sql`select rewards.create_check_ins_month('2026-10-01'::date)`.execute(db);
    await sql`create table rewards.check_ins_copy (like rewards.check_ins including all)`.execute(db);
    const results = new Map<string, { cpu: number[]; wall: number[]; wal: number[] }>();
    for (let round = 1; round <= ROUNDS; round++) {
      const rows = generateRows();
      const seenAt = new Date();
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { mode: 0o755 });
      writeCsvFiles(rows, seenAt, dir);
      for (const variant of VARIANTS) {
        const m = await measure(postgres, db, variant, rows, seenAt, dir);
        const entry = results.get(variant.name) ?? { cpu: [], wall: [], wal: [] };
        entry.cpu.push(m.cpuMicrosPerRow);
        entry.wall.push(m.wallMicrosPerRow);
        entry.wal.push(m.walBytesPerRow);
        results.set(variant.name, entry);
      }
      process.stderr.write(`[bench write-path-parts] round ${round}/${ROUNDS} done\n`);
    }
    const copy = median(results.get(VARIANTS[0]!.name)!.cpu);
    const copyWall = median(results.get(VARIANTS[0]!.name)!.wall);
    process.stdout.write(
      `\nWrite path, part by part: ${ROWS.toLocaleString('en')} rows, pages of ${PAGE}, ${LOCATIONS} venues, ` +
        `${ROUNDS} rounds (median; cluster CPU = every Postgres process)\n\n` +
        '| variant | Postgres CPU µs/row | ÷ one COPY | wall µs/row | ÷ one COPY | WAL bytes/row |\n' +
        '|---|---|---|---|---|---|\n',
    );
    for (const [name, r] of results) {
      const cpu = median(r.cpu);
      const wall = median(r.wall);
      process.stdout.write(
        `| ${name} | ${cpu.toFixed(1)} (${r.cpu.map((v) => v.toFixed(1)).join(' / ')}) | ${(cpu / copy).toFixed(2)} | ` +
          `${wall.toFixed(1)} | ${(wall / copyWall).toFixed(2)} | ${Math.round(median(r.wal))} |\n`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await bench.drop();
    await postgres.stop();
  }
}

await main();
