import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { parseFeedCheckIn, type CheckIn } from '../../src/records/index.js';
import { checkInUpsert } from '../../src/warehouse/check-ins.js';
import type { DB } from '../../src/warehouse/schema.js';
import { feedCheckIn } from '../../test/unit/records/fixtures.js';

// EXPLAIN (ANALYZE, BUFFERS) of one page write (checkInUpsert's statement) after `before` rows
// spread over `locations` venues of one day: where a page's time goes (rollup triggers are
// reported apart by EXPLAIN as "Trigger ..." lines). Used by hand:
//   node --import tsx bench/lib/explain-page.ts <database url>

export async function explainPageWrite(
  db: Kysely<DB>,
  options: {
    before: number;
    pageSize: number;
    locations: number;
    day: Date;
    held?: boolean;
    /** ANALYZE the tables first (default true); false: as a fresh warehouse mid-backfill. */
    analyze?: boolean;
  },
): Promise<string[]> {
  const parsed = parseFeedCheckIn(feedCheckIn());
  if (!parsed.ok) throw new Error(parsed.rejection.reason);
  const base = parsed.record;
  const dayStart = Date.UTC(
    options.day.getUTCFullYear(),
    options.day.getUTCMonth(),
    options.day.getUTCDate(),
  );
  await sql`select rewards.create_check_ins_month(${new Date(dayStart).toISOString().slice(0, 10)}::date)`.execute(
    db,
  );
  const locations = Array.from({ length: options.locations }, () => ({
    locationId: randomUUID(),
    restaurantId: randomUUID(),
  }));
  const make = (n: number, offset: number): CheckIn[] =>
    Array.from({ length: n }, (_, i): CheckIn => {
      const createdAtMs =
        dayStart + Math.floor(((offset + i) * 86_400_000) / (options.before + options.pageSize + 1));
      return {
        ...base,
        ...locations[(offset + i) % locations.length]!,
        id: randomUUID(),
        createdAtMs,
        endedAtMs: createdAtMs + 30 * 60_000,
      };
    });
  for (let offset = 0; offset < options.before; offset += options.pageSize) {
    const upsert = checkInUpsert(make(options.pageSize, offset), new Date());
    await sql`with ${sql.join(upsert!.ctes)} select 1`.execute(db);
  }
  if (options.analyze !== false) await sql`analyze`.execute(db);
  const page = make(options.pageSize, options.before);
  if (options.held === true) {
    const first = checkInUpsert(page, new Date(Date.now() - 1000));
    await sql`with ${sql.join(first!.ctes)} select 1`.execute(db);
  }
  const upsert = checkInUpsert(page, new Date());
  const { rows } = await sql<{ 'QUERY PLAN': string }>`
    explain (analyze, buffers, costs off, timing on) with ${sql.join(upsert!.ctes)} select 1`.execute(db);
  return rows.map((row) => row['QUERY PLAN']);
}
