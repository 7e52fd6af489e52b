import { sql, type ExpressionBuilder, type RawBuilder, type Transaction } from 'kysely';
import { isUuid, type CheckIn, type Location } from '../records/index.js';
import type { Executor } from './database.js';
import type { DB, SyncWindow } from './schema.js';
import { CHECKINS_STREAM } from './sync-window-reads.js';
import { upsertEmbeddedLocations } from './locations.js';
import { dailyRollupDelta } from './check-ins-daily-delta.js';
import {
  booleanArrayLiteral,
  dateArrayLiteral,
  integerArrayLiteral,
  uuidArrayLiteral,
} from './array-literals.js';

/**
 * Upserts one page of check-ins in ONE statement: `unnest` of column arrays takes one
 * parameter per column, so a page of any size stays far from Postgres's 65,535-parameter limit.
 *
 * Stale-write guard: a row is only updated by a read at least as new as the one that last
 * wrote it, and a known `ended_at` is never replaced by null (a visit does not un-end). A row
 * marked deleted that is seen again is live again. Returns how many rows were new (first seen by
 * this read: xmax cannot be read back from a partitioned table's upsert).
 */
export async function upsertCheckInPage(
  db: Executor,
  checkIns: readonly CheckIn[],
  seenAt: Date,
): Promise<{ inserted: number; written: number }> {
  const upsert = checkInUpsert(checkIns, seenAt);
  if (upsert === null) return { inserted: 0, written: 0 };
  const { rows } = await sql<{ fresh: number; rewritten: number; held: number }>`
    with ${sql.join(upsert.ctes)}
    select (select count(*) from new_check_ins)::int as fresh,
      (select count(*) from held_written_check_ins where inserted)::int as rewritten,
      (select count(*) from held_written_check_ins)::int as held`.execute(db);
  const row = rows[0] ?? { fresh: 0, rewritten: 0, held: 0 };
  return { inserted: row.fresh + row.rewritten, written: row.fresh + row.held };
}

/**
 * The upsert of `upsertCheckInPage` as the CTEs of one statement (null: nothing to write), to
 * place in the statement's WITH; `new_check_ins` and `held_written_check_ins` return a row per row
 * written. `onlyIf` is an extra condition on every write (the page statement's lease check).
 *
 * check_ins is partitioned by month of created_at and keyed by (id, created_at)
 * (docs/warehouse-scale.md), so the key no longer makes an id unique: rewards.check_in_ids, one
 * row per id with its current created_at, does. One probe of its primary key per row splits the
 * page (docs/check-in-feed.md, "Writing a page"):
 * - ids the warehouse does not hold (every row of a backfill, and new arrivals): a plain INSERT
 *   into the directory and into check_ins, no conflict handling (an upsert pays a speculative
 *   insertion and an arbiter probe per row, and the update and delete triggers' work). Two
 *   writers of one new id at once (two windows' leases never overlap, so only an id whose
 *   created_at moved between two windows in flight) make one statement fail on the directory's
 *   key (nothing of it is written); that window's attempt is retried from its checkpoint, and
 *   then the id is held and takes the upsert.
 * - ids it holds: the upsert with the stale-write guard. An id stored with ANOTHER created_at is
 *   moved: deleted from its month and inserted into the new one with its first_seen_at and known
 *   ended_at, in this statement, and the directory follows. A stored row seen by a newer read
 *   than this one is left alone, and then the new row is not inserted either.
 */
export function checkInUpsert(
  checkIns: readonly CheckIn[],
  seenAt: Date,
  onlyIf: RawBuilder<boolean> = sql<boolean>`true`,
): { ctes: RawBuilder<unknown>[] } | null {
  const page = pageCheckInsCte(uniqueById(checkIns));
  if (page === null) return null;
  const ctes = [
    page,
    // Each id looked up in the directory by one probe of its primary key (a scalar subquery, so
    // the planner cannot turn it into a scan of the whole directory): O(page), at any size.
    sql`probed_check_ins as (
      select t.*, (select d.created_at from rewards.check_in_ids d where d.id = t.id) as held_at
      from page_check_ins t)`,
    sql`held_check_ins as (select * from probed_check_ins where held_at is not null)`,
    sql`new_directory_ids as (
      insert into rewards.check_in_ids (id, created_at)
      select t.id, t.created_at from probed_check_ins t where t.held_at is null and ${onlyIf})`,
    sql`new_check_ins as (
      insert into rewards.check_ins (${sql.raw(COLUMNS)}, first_seen_at, last_seen_at)
      select t.${sql.raw(COLUMNS.replaceAll(', ', ', t.'))}, ${seenAt}::timestamptz, ${seenAt}::timestamptz
      from probed_check_ins t where t.held_at is null and ${onlyIf}
      returning 1)`,
    ...heldRowWrites(seenAt, onlyIf, COLUMNS),
  ];
  return { ctes };
}

const COLUMNS = 'id, location_id, restaurant_id, svc_pay_enabled, created_at, ended_at, extra';

/** A page's rows, one per id (the last one listed). */
function uniqueById(checkIns: readonly CheckIn[]): readonly CheckIn[] {
  const byId = new Map<string, CheckIn>();
  for (const checkIn of checkIns) byId.set(checkIn.id, checkIn);
  return byId.size === checkIns.length ? checkIns : [...byId.values()];
}

/** The page's rows (one per id) as the CTE `page_check_ins`; null when there are none. */
function pageCheckInsCte(unique: readonly CheckIn[]): RawBuilder<unknown> | null {
  if (unique.length === 0) return null;
  // Timestamps travel as epoch milliseconds (int8): no toISOString per row in Node, no
  // quoting in the array literal, and Postgres adds an interval instead of parsing a date
  // (exact: a record holds whole milliseconds). Ids, numbers and flags travel as array literals
  // joined here (array-literals.ts), one string per column. A page's few venues travel once each,
  // and each row carries its venue's place in that list (see venuesOf). A page without extra fields
  // sends an empty jsonb[]: unnest pads the shorter array with nulls.
  const venues = venuesOf(unique);
  return sql`page_check_ins as (
      select t.id,
        (${uuidArrayLiteral(venues.locationIds, (id) => id)}::uuid[])[t.venue] as location_id,
        (${uuidArrayLiteral(venues.restaurantIds, (id) => id)}::uuid[])[t.venue] as restaurant_id,
        t.svc_pay_enabled,
        'epoch'::timestamptz + t.created_ms * interval '1 millisecond' as created_at,
        'epoch'::timestamptz + t.ended_ms * interval '1 millisecond' as ended_at,
        t.extra
      from unnest(
        ${uuidArrayLiteral(unique, (c) => c.id)}::uuid[],
        ${integerArrayLiteral(venues.venueOfRow, (venue) => venue)}::int4[],
        ${booleanArrayLiteral(unique, (c) => c.svcPayEnabled)}::boolean[],
        ${integerArrayLiteral(unique, (c) => c.createdAtMs)}::int8[],
        ${integerArrayLiteral(unique, (c) => c.endedAtMs)}::int8[],
        ${extrasOf(unique)}::jsonb[]
      ) as t(id, venue, svc_pay_enabled, created_ms, ended_ms, extra))`;
}

/**
 * A page's distinct (location, restaurant) pairs, and for each row the 1-based place of its pair
 * (a Postgres array subscript). A feed page of 500 names about 44 locations: sending two UUIDs a
 * row halved the statement's parameters and the time to build and send them (issue 39, session 9).
 */
export function venuesOf(rows: readonly Pick<CheckIn, 'locationId' | 'restaurantId'>[]): {
  locationIds: string[];
  restaurantIds: string[];
  venueOfRow: number[];
} {
  const locationIds: string[] = [];
  const restaurantIds: string[] = [];
  const placeOf = new Map<string, Map<string, number>>(); // location id → restaurant id → place
  const venueOfRow = rows.map(({ locationId, restaurantId }) => {
    let byRestaurant = placeOf.get(locationId);
    if (byRestaurant === undefined) placeOf.set(locationId, (byRestaurant = new Map<string, number>()));
    let place = byRestaurant.get(restaurantId);
    if (place === undefined) {
      place = locationIds.push(locationId);
      restaurantIds.push(restaurantId);
      byRestaurant.set(restaurantId, place);
    }
    return place;
  });
  return { locationIds, restaurantIds, venueOfRow };
}

/** The page's extra fields as jsonb texts; none (the usual page) is an empty array. */
function extrasOf(unique: readonly CheckIn[]): (string | null)[] {
  if (unique.every((c) => c.extra == null)) return [];
  return unique.map((c) => (c.extra == null ? null : JSON.stringify(c.extra)));
}

/**
 * The writes of a page whose ids the caller expects to be new (a window's first read, such as
 * every window of a backfill), as the CTEs of one statement: the page's rows inserted into the
 * directory and into check_ins, with no probe and none of the upsert's or the moves' CTEs (the
 * statement plans and runs in a fraction of checkInUpsert's). The page counts its own rows into
 * the rollups (`counted_check_ins`, migration 0015: its groups, made here, instead of the insert
 * trigger grouping every row again); the insert reads that count, so the two run together or
 * not at all. An id the directory already holds makes the statement fail on its key, writing
 * nothing (isHeldIdConflict): the caller then writes the page with checkInUpsert.
 * `new_check_ins` returns a row per row written. Null: nothing to write.
 */
export function checkInInsert(
  checkIns: readonly CheckIn[],
  seenAt: Date,
  onlyIf: RawBuilder<boolean> = sql<boolean>`true`,
): { ctes: RawBuilder<unknown>[] } | null {
  const unique = uniqueById(checkIns);
  const page = pageCheckInsCte(unique);
  if (page === null) return null;
  const delta = dailyRollupDelta(unique);
  return {
    ctes: [
      page,
      sql`counted_check_ins as (
      select rewards.check_ins_count_page(
        ${dateArrayLiteral(delta.days)}::date[],
        ${uuidArrayLiteral(delta.restaurantIds, (id) => id)}::uuid[],
        ${uuidArrayLiteral(delta.locationIds, (id) => id)}::uuid[],
        ${integerArrayLiteral(delta.checkIns, (count) => count)}::int4[],
        ${integerArrayLiteral(delta.svcPayCheckIns, (count) => count)}::int4[],
        ${booleanArrayLiteral(delta.medianChanged, (changed) => changed)}::boolean[],
        ${seenAt}::timestamptz) as counted
      where ${onlyIf})`,
      sql`new_directory_ids as (
      insert into rewards.check_in_ids (id, created_at)
      select t.id, t.created_at from page_check_ins t where ${onlyIf})`,
      sql`new_check_ins as (
      insert into rewards.check_ins (${sql.raw(COLUMNS)}, first_seen_at, last_seen_at)
      select t.${sql.raw(COLUMNS.replaceAll(', ', ', t.'))}, ${seenAt}::timestamptz, ${seenAt}::timestamptz
      from page_check_ins t where ${onlyIf} and (select counted from counted_check_ins) is not null
      returning 1)`,
    ],
  };
}

/**
 * The error of checkInInsert's statement when an id of the page is already held: a unique
 * violation of the directory's key or of a check_ins partition's (whichever of the statement's two
 * inserts meets the stored id first).
 */
export function isHeldIdConflict(error: unknown): boolean {
  const e = error as { code?: unknown; table?: unknown; constraint?: unknown } | null;
  return (
    e?.code === '23505' &&
    typeof e.table === 'string' &&
    /^check_in(_ids|s\w*)$/.test(e.table) &&
    typeof e.constraint === 'string' &&
    e.constraint.endsWith('_pkey')
  );
}

/** checkInUpsert's CTEs for the ids the directory holds: moves, then the guarded upsert. */
function heldRowWrites(seenAt: Date, onlyIf: RawBuilder<boolean>, columns: string): RawBuilder<unknown>[] {
  return [
    // Ids stored with another created_at (rare): the rows to move.
    sql`elsewhere_check_ins as (
      select h.id, h.held_at as created_at, h.created_at as to_created_at from held_check_ins h
      where h.held_at <> h.created_at)`,
    // Each join below is gated by `exists (select 1 from elsewhere_check_ins)`, a condition on no
    // row, which Postgres evaluates once before the join (a one-time filter): a page with no move
    // (nearly all) never starts them. Without it, a planner with stale statistics (a warehouse
    // mid-backfill) chose a merge join that sorted a whole partition on every page, whose cost then
    // grew with the partition (bench/checkins.ts, "busy venue").
    sql`newer_check_ins as (
      select c.id from elsewhere_check_ins e
      join rewards.check_ins c on c.id = e.id and c.created_at = e.created_at
      where c.last_seen_at > ${seenAt} and exists (select 1 from elsewhere_check_ins))`,
    sql`moved_check_ins as (
      delete from rewards.check_ins as old using elsewhere_check_ins e
      where old.id = e.id and old.created_at = e.created_at and old.last_seen_at <= ${seenAt} and ${onlyIf}
        and exists (select 1 from elsewhere_check_ins)
      returning old.id, old.first_seen_at, old.ended_at)`,
    sql`directory_check_ins as (
      update rewards.check_in_ids as d set created_at = e.to_created_at
      from elsewhere_check_ins e
      where d.id = e.id and ${onlyIf} and exists (select 1 from elsewhere_check_ins)
        and not exists (select 1 from newer_check_ins n where n.id = e.id))`,
    sql`held_written_check_ins as (
      insert into rewards.check_ins as c
        (${sql.raw(columns)}, first_seen_at, last_seen_at)
      select h.id, h.location_id, h.restaurant_id, h.svc_pay_enabled, h.created_at,
        coalesce(h.ended_at, m.ended_at), h.extra, coalesce(m.first_seen_at, ${seenAt}), ${seenAt}
      from held_check_ins h
      left join moved_check_ins as m on m.id = h.id
      where ${onlyIf} and not exists (select 1 from newer_check_ins n where n.id = h.id)
      on conflict (id, created_at) do update set
        location_id = excluded.location_id,
        restaurant_id = excluded.restaurant_id,
        svc_pay_enabled = excluded.svc_pay_enabled,
        ended_at = coalesce(excluded.ended_at, c.ended_at),
        extra = excluded.extra,
        last_seen_at = excluded.last_seen_at,
        deleted_at = null
      where c.last_seen_at <= excluded.last_seen_at
      returning (c.first_seen_at = ${seenAt}) as inserted)`,
  ];
}

/**
 * A page's check-ins and the locations (and restaurants) embedded in them, in the caller's
 * transaction. `locations` narrows the embedded writes to those not already written
 * (EmbeddedLocationsCache); all of the page's by default.
 */
export async function writeCheckIns(
  trx: Transaction<DB>,
  checkIns: readonly CheckIn[],
  seenAt: Date,
  locations: readonly Location[] = checkIns.map((checkIn) => checkIn.location),
): Promise<void> {
  await upsertCheckInPage(trx, checkIns, seenAt);
  await upsertEmbeddedLocations(trx, locations, seenAt);
}

/**
 * Check-ins the API listed in this window whose new value was refused (by validation or by the
 * database): their stored rows are refreshed as seen (`last_seen_at`; a row marked deleted is live
 * again), content untouched. The API still lists them, so they are never counted as unseen,
 * suspected or marked deleted. Returns the ids that have a stored row in the window: those are
 * accounted for as rows, and must not also count as rejected.
 */
export async function refreshRefusedSightings(
  db: Executor,
  window: { start: Date; end: Date },
  recordIds: readonly (string | null)[],
  seenAt: Date,
): Promise<Set<string>> {
  const ids = [...new Set(recordIds.filter(isUuid).map((id) => id.toLowerCase()))];
  if (ids.length === 0) return new Set();
  const { rows } = await sql<{ id: string }>`
    update rewards.check_ins as c
    set last_seen_at = greatest(c.last_seen_at, ${seenAt}::timestamptz), deleted_at = null
    where c.id = any(${ids}::uuid[])
      and c.created_at >= ${window.start} and c.created_at < ${window.end}
    returning c.id`.execute(db);
  return new Set(rows.map((row) => row.id));
}

export interface WindowCounts {
  total: number;
  seenSince: number;
  ongoing: number;
}

/**
 * The three counts of WindowCounts over live check-ins, in one scan (FILTER clauses). `since`
 * is a value or an SQL expression (a column of an enclosing query); null counts none as seen.
 */
function liveCountSelections(since: Date | RawBuilder<Date> | null) {
  return [
    sql<string>`count(*)`.as('live_total'),
    since === null
      ? sql<string>`0`.as('live_seen_since')
      : sql<string>`count(*) filter (where last_seen_at >= ${since})`.as('live_seen_since'),
    sql<string>`count(*) filter (where ended_at is null)`.as('live_ongoing'),
  ];
}

function windowCountsOf(row: {
  live_total: string;
  live_seen_since: string;
  live_ongoing: string;
}): WindowCounts {
  return {
    total: Number(row.live_total),
    seenSince: Number(row.live_seen_since),
    ongoing: Number(row.live_ongoing),
  };
}

/** Live warehouse rows in [start, end): all of them, those seen since `since`, and ongoing visits. */
export async function countWindowRows(
  db: Executor,
  start: Date,
  end: Date,
  since: Date | null,
): Promise<WindowCounts> {
  const row = await db
    .selectFrom('rewards.check_ins')
    .select(liveCountSelections(since))
    .where('created_at', '>=', start)
    .where('created_at', '<', end)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return windowCountsOf(row);
}

/**
 * A window's row and the counts of `countWindowRows` in one statement, "seen" meaning since its
 * attempt started (`attemptStart` if none is recorded).
 */
export async function windowWithCounts(
  db: Executor,
  window: { start: Date; end: Date },
  attemptStart: Date,
): Promise<{ row: SyncWindow; counts: WindowCounts } | undefined> {
  const found = await db
    .selectFrom('rewards.sync_windows as w')
    .innerJoinLateral(
      (eb) =>
        eb
          .selectFrom('rewards.check_ins as c')
          .select(liveCountSelections(sql<Date>`coalesce(w.attempt_started_at, ${attemptStart})`))
          // The window's bounds as values, not w's columns: Postgres then prunes check_ins to the
          // window's month partition when it plans the statement.
          .where('c.created_at', '>=', window.start)
          .where('c.created_at', '<', window.end)
          .where('c.deleted_at', 'is', null)
          .as('n'),
      (join) => join.onTrue(),
    )
    .selectAll('w')
    .select(['n.live_total', 'n.live_seen_since', 'n.live_ongoing'])
    .where('w.stream', '=', CHECKINS_STREAM)
    .where('w.window_start', '=', window.start)
    .where('w.window_end', '=', window.end)
    .executeTakeFirst();
  if (found === undefined) return undefined;
  const { live_total, live_seen_since, live_ongoing, ...row } = found;
  return { row, counts: windowCountsOf({ live_total, live_seen_since, live_ongoing }) };
}

/**
 * Live rows of a window that a complete, consistent paging did not meet (last seen before
 * `since`). With `markDeletedAt` they are marked deleted at that instant; without, only counted.
 */
export async function unseenWindowRows(
  db: Executor,
  window: { start: Date; end: Date },
  since: Date,
  markDeletedAt?: Date,
): Promise<number> {
  const unseen = (eb: ExpressionBuilder<DB, 'rewards.check_ins'>) =>
    eb.and([
      eb('created_at', '>=', window.start),
      eb('created_at', '<', window.end),
      eb('last_seen_at', '<', since),
      eb('deleted_at', 'is', null),
    ]);
  if (markDeletedAt === undefined) {
    const row = await db
      .selectFrom('rewards.check_ins')
      .select((eb) => eb.fn.countAll<string>().as('unseen'))
      .where(unseen)
      .executeTakeFirstOrThrow();
    return Number(row.unseen);
  }
  const result = await db
    .updateTable('rewards.check_ins')
    .set({ deleted_at: markDeletedAt })
    .where(unseen)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
