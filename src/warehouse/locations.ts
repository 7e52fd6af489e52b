import { sql, type Insertable, type Selectable, type Transaction } from 'kysely';
import { contentHash, type Location, type Neighborhood } from '../records/index.js';
import { closeCurrentVersions, recordVersions, statementChunks } from './history.js';
import { byId, insertEmbeddedRestaurants } from './restaurants.js';
import type { DB, LocationsTable } from './schema.js';
import type { Executor } from './database.js';

/** The columns that describe a location (bookkeeping columns excluded), as the schema types them. */
export type LocationColumns = Omit<
  Selectable<LocationsTable>,
  'id' | 'raw' | 'content_hash' | 'first_seen_at' | 'last_seen_at' | 'last_refreshed_at' | 'deleted_at'
>;

const EMPTY_COLUMNS: LocationColumns = {
  restaurant_id: null,
  neighborhood_id: null,
  name: null,
  slug: null,
  street: null,
  street2: null,
  city: null,
  state: null,
  zipcode: null,
  country: null,
  latitude: null,
  longitude: null,
  phone_number: null,
  time_zone: null,
  payments_enabled: null,
  is_club: null,
  reservation_url: null,
  reservations_enabled: null,
  google_place_id: null,
  created_at: null,
  updated_at: null,
};

const COLUMN_NAMES = Object.keys(EMPTY_COLUMNS) as (keyof LocationColumns)[];

/**
 * Only the columns this form of the location carries. The reduced form of `GET /locations/{id}`
 * (and the short form of member check-ins) lacks slug, phone, reservations, place id and
 * timestamps: those keys are absent here, so merging never nulls what the full form gave.
 */
export function locationFields(location: Location): Partial<LocationColumns> {
  const fields: Partial<LocationColumns> = {
    restaurant_id: location.restaurantId,
    neighborhood_id: location.neighborhoodId,
    name: location.name,
  };
  if (location.slug !== undefined) fields.slug = location.slug;
  if (location.address !== undefined) {
    const { street, street2, city, state, zipcode, country } = location.address;
    Object.assign(fields, { street, street2, city, state, zipcode, country });
  }
  if (location.coordinate !== undefined) {
    fields.latitude = location.coordinate.latitude;
    fields.longitude = location.coordinate.longitude;
  }
  if (location.phoneNumber !== undefined) fields.phone_number = location.phoneNumber;
  if (location.timeZone !== undefined) fields.time_zone = location.timeZone;
  if (location.paymentsEnabled !== undefined) fields.payments_enabled = location.paymentsEnabled;
  if (location.isClub !== undefined) fields.is_club = location.isClub;
  if (location.reservationUrl !== undefined) fields.reservation_url = location.reservationUrl;
  if (location.reservationsEnabled !== undefined) fields.reservations_enabled = location.reservationsEnabled;
  if (location.googlePlaceId !== undefined) fields.google_place_id = location.googlePlaceId;
  if (location.createdAt !== undefined) fields.created_at = location.createdAt;
  if (location.updatedAt !== undefined) fields.updated_at = location.updatedAt;
  return fields;
}

/** The row after applying `incoming` to `existing`: present fields win, absent ones are kept. */
export function mergeLocationColumns(
  existing: LocationColumns | undefined,
  incoming: Partial<LocationColumns>,
): LocationColumns {
  // Only the location columns: an existing row read from the table carries bookkeeping too.
  const merged = { ...EMPTY_COLUMNS };
  for (const name of COLUMN_NAMES) {
    const value = incoming[name] !== undefined ? incoming[name] : existing?.[name];
    if (value !== undefined) (merged as Record<string, unknown>)[name] = value;
  }
  return merged;
}

/**
 * The raw record after applying a form: a full form replaces it; a poorer form updates only its
 * own keys and never replaces the richer embedded restaurant the full form carried (a key only
 * the poorer form's restaurant has, such as a field new to the API, is added to it).
 */
export function mergeLocationRaw(existingRaw: unknown, incoming: Location): unknown {
  if (incoming.form === 'full' || !isObject(existingRaw) || !isObject(incoming.raw)) return incoming.raw;
  const { restaurant, ...rest } = incoming.raw;
  const richer = existingRaw['restaurant'];
  const merged =
    isObject(richer) && isObject(restaurant) ? { ...restaurant, ...richer } : (richer ?? restaurant);
  return { ...existingRaw, ...rest, restaurant: merged };
}

/** What decides a new location version: the merged columns, minus `updated_at` (a touch is not a change). */
export function locationContentHash(columns: LocationColumns): string {
  const { updated_at: _ignored, ...content } = columns;
  return contentHash(content);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type ExistingLocation = Pick<
  Selectable<LocationsTable>,
  keyof LocationColumns | 'id' | 'raw' | 'deleted_at' | 'last_seen_at'
>;

export interface WriteLocationsOptions {
  /** A `GET /locations/{id}` answer: sets last_refreshed_at and clears deleted_at. */
  refreshed: boolean;
}

export interface WriteLocationsResult {
  written: number;
  newVersions: number;
}

/**
 * Writes locations in whatever form they came: locks the existing rows (so concurrent writers —
 * the feed in several workers, the locations pass — serialize per location), merges field by
 * field, upserts, and records a history version when the merged content changed. A read older
 * than the stored one is skipped (`seenAt` is when its request started). A location
 * marked gone stays gone (and unversioned) until `GET /locations/{id}` answers again: old
 * check-ins in the feed keep showing removed locations.
 */
export async function writeLocations(
  trx: Transaction<DB>,
  locations: readonly Location[],
  seenAt: Date,
  options: WriteLocationsOptions,
): Promise<WriteLocationsResult> {
  const byId = new Map(locations.map((location) => [location.id, location]));
  if (byId.size === 0) return { written: 0, newVersions: 0 };
  await lockEmbeddedWriters(trx);
  const existing = await lockExistingLocations(trx, [...byId.keys()].sort());
  const { rows, versions } = mergedLocations(byId, existing, seenAt, options);
  await upsertLocationRows(trx, rows, options);
  const plan = await recordVersions(trx, 'rewards.locations_history', versions, seenAt);
  await upsertNeighborhoods(
    trx,
    [...byId.values()].map((location) => location.neighborhood),
    seenAt,
  );
  return { written: rows.length, newVersions: plan.open.length };
}

/** The stored rows of `ids`, locked in id order (the order every writer takes them in). */
async function lockExistingLocations(
  trx: Transaction<DB>,
  ids: string[],
): Promise<Map<string, ExistingLocation>> {
  const rows = await trx
    .selectFrom('rewards.locations')
    .select([...COLUMN_NAMES, 'id', 'raw', 'deleted_at', 'last_seen_at'])
    .where('id', '=', sql<string>`any(${ids}::uuid[])`)
    .orderBy('id')
    .forUpdate()
    .execute();
  return new Map(rows.map((row) => [row.id, row]));
}

/** Each read merged field by field into what is stored, and the history version it would open. */
function mergedLocations(
  byId: ReadonlyMap<string, Location>,
  existing: ReadonlyMap<string, ExistingLocation>,
  seenAt: Date,
  options: WriteLocationsOptions,
) {
  const rows: Insertable<LocationsTable>[] = [];
  const versions: { id: string; hash: string; raw: unknown }[] = [];
  for (const id of [...byId.keys()].sort()) {
    const location = byId.get(id);
    if (location === undefined) continue;
    const before = existing.get(id);
    // Stale-write guard: a read older than the one stored (a slow page, a re-paged old window
    // against a newer GET /locations/{id}) neither overwrites it nor opens a version.
    if (before !== undefined && before.last_seen_at > seenAt) continue;
    const columns = mergeLocationColumns(before, locationFields(location));
    const raw = mergeLocationRaw(before?.raw, location);
    const hash = locationContentHash(columns);
    rows.push({
      id,
      ...columns,
      raw: JSON.stringify(raw),
      content_hash: hash,
      first_seen_at: seenAt,
      last_seen_at: seenAt,
      last_refreshed_at: options.refreshed ? seenAt : null,
      deleted_at: options.refreshed ? null : (before?.deleted_at ?? null),
    });
    const gone = !options.refreshed && before !== undefined && before.deleted_at !== null;
    if (!gone) versions.push({ id, hash, raw });
  }
  return { rows, versions };
}

async function upsertLocationRows(
  trx: Transaction<DB>,
  rows: Insertable<LocationsTable>[],
  options: WriteLocationsOptions,
): Promise<void> {
  for (const chunk of statementChunks(rows, 28)) {
    await trx
      .insertInto('rewards.locations')
      .values(chunk)
      .onConflict((conflict) =>
        conflict
          .column('id')
          .doUpdateSet((eb) => ({
            ...Object.fromEntries(COLUMN_NAMES.map((name) => [name, eb.ref(`excluded.${name}`)])),
            raw: eb.ref('excluded.raw'),
            content_hash: eb.ref('excluded.content_hash'),
            last_seen_at: eb.ref('excluded.last_seen_at'),
            ...(options.refreshed
              ? { last_refreshed_at: eb.ref('excluded.last_refreshed_at'), deleted_at: null }
              : {}),
          }))
          // The same guard, enforced by the database as well.
          .where('rewards.locations.last_seen_at', '<=', (eb) => eb.ref('excluded.last_seen_at')),
      )
      .execute();
  }
}

/**
 * The check-in stream calls this with each feed page: full-form locations, their neighborhoods,
 * and their restaurants where no restaurant row exists yet (never overwriting a richer row).
 */
/**
 * Every page of the feed embeds mostly the same locations, restaurants and neighborhoods, so
 * concurrent page transactions (several workers) write the same rows across several tables;
 * orderings that differ somewhere (history, neighborhoods, restaurants) deadlock. One
 * transaction-scoped advisory lock makes those writers take turns for this short step; it is
 * released at commit, and a transaction may take it again.
 */
async function lockEmbeddedWriters(trx: Transaction<DB>): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended('rewards-etl:embedded-locations', 0))`.execute(trx);
}

export async function upsertEmbeddedLocations(
  trx: Transaction<DB>,
  locations: readonly Location[],
  seenAt: Date,
): Promise<WriteLocationsResult> {
  if (locations.length === 0) return { written: 0, newVersions: 0 };
  await lockEmbeddedWriters(trx);
  await insertEmbeddedRestaurants(
    trx,
    locations.map((location) => location.restaurant),
    seenAt,
  );
  return writeLocations(trx, locations, seenAt, { refreshed: false });
}

export async function upsertNeighborhoods(
  db: Executor,
  neighborhoods: readonly Neighborhood[],
  seenAt: Date,
): Promise<void> {
  const unique = [...new Map(neighborhoods.map((n) => [n.id, n])).values()].sort(byId);
  for (const chunk of statementChunks(unique, 5)) {
    await db
      .insertInto('rewards.neighborhoods')
      .values(chunk.map((n) => ({ ...n, first_seen_at: seenAt, last_seen_at: seenAt })))
      .onConflict((conflict) =>
        conflict.column('id').doUpdateSet((eb) => ({
          name: eb.ref('excluded.name'),
          region: eb.ref('excluded.region'),
          last_seen_at: sql<Date>`greatest(${eb.ref('rewards.neighborhoods.last_seen_at')}, ${eb.ref('excluded.last_seen_at')})`,
        })),
      )
      .execute();
  }
}

/**
 * `GET /locations/{id}` answered 404: the location is gone; its current version ends at `at`.
 * `newlyGone`: it was not marked gone before (a location already gone that still answers 404 is
 * no change).
 */
export async function markLocationGone(
  trx: Transaction<DB>,
  id: string,
  at: Date,
): Promise<{ found: boolean; newlyGone: boolean }> {
  const result = await trx
    .updateTable('rewards.locations')
    .set({ deleted_at: sql<Date>`coalesce(deleted_at, ${at})`, last_refreshed_at: at })
    .where('id', '=', id)
    .returning(sql<boolean>`deleted_at = ${at}`.as('newly_gone'))
    .executeTakeFirst();
  await closeCurrentVersions(trx, 'rewards.locations_history', [id], at);
  return { found: result !== undefined, newlyGone: result?.newly_gone === true };
}

/**
 * The open hours as returned (shape not specified by the API), replacing the previous answer.
 * Returns whether they differ from what was stored (as JSON values; none stored: changed).
 */
export async function upsertOpenHours(
  db: Executor,
  locationId: string,
  hours: unknown,
  fetchedAt: Date,
): Promise<{ changed: boolean }> {
  const json = JSON.stringify(hours);
  const before = await db
    .selectFrom('rewards.location_open_hours')
    .select(sql<boolean>`hours = ${json}::jsonb`.as('same'))
    .where('location_id', '=', locationId)
    .executeTakeFirst();
  await db
    .insertInto('rewards.location_open_hours')
    .values({ location_id: locationId, hours: json, fetched_at: fetchedAt })
    .onConflict((conflict) =>
      conflict.column('location_id').doUpdateSet((eb) => ({
        hours: eb.ref('excluded.hours'),
        fetched_at: eb.ref('excluded.fetched_at'),
      })),
    )
    .execute();
  return { changed: before?.same !== true };
}

/** Every location's id and last refresh (null: never refreshed), for the locations pass's plan. */
export async function locationRefreshStates(
  db: Executor,
): Promise<Array<{ id: string; lastRefreshedAt: Date | null }>> {
  const rows = await db
    .selectFrom('rewards.locations')
    .select(['id', 'last_refreshed_at'])
    .orderBy('id')
    .execute();
  return rows.map((row) => ({ id: row.id, lastRefreshedAt: row.last_refreshed_at }));
}

export async function countLocations(db: Executor): Promise<{ total: number; neverRefreshed: number }> {
  const row = await db
    .selectFrom('rewards.locations')
    .select((eb) => [
      eb.fn.countAll<string>().as('total'),
      eb.fn.count<string>('id').filterWhere('last_refreshed_at', 'is', null).as('never'),
    ])
    .executeTakeFirstOrThrow();
  return { total: Number(row.total), neverRefreshed: Number(row.never) };
}
