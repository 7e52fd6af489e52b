import { type Insertable, type Transaction } from 'kysely';
import {
  contentHash,
  restaurantVersionContent,
  type ListedRestaurant,
  type Restaurant,
} from '../records/index.js';
import type { PreviousRecord } from '../sync/snapshot-diff.js';
import type { VersionPlan } from '../sync/scd2.js';
import { markDeleted, recordVersions, statementChunks, type RehashStored } from './history.js';
import type { DB, RestaurantsTable } from './schema.js';
import type { Executor } from './database.js';

/**
 * What decides a new restaurant version: the record as received, minus
 * - the query strings of asset URLs (the API signs image URLs with an expiry parameter that
 *   changes on its own), and
 * - `updated_at`: a touch that changed nothing else is not a new version, and a real change
 *   always changes some other field, so history records content, not bookkeeping.
 */
export function restaurantContentHash(restaurant: Pick<Restaurant, 'raw'>): string {
  const content = restaurantVersionContent(restaurant);
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return contentHash(content);
  const { updated_at: _ignored, ...rest } = content as Record<string, unknown>;
  return contentHash(rest);
}

/** A stored restaurant version's hash recomputed from its raw record (`resync restaurants`). */
const rehashStoredRestaurant: RehashStored = (raw) => restaurantContentHash({ raw });

function listedRow(restaurant: ListedRestaurant, seenAt: Date): Insertable<RestaurantsTable> {
  return {
    id: restaurant.id,
    name: restaurant.name,
    cuisine: restaurant.cuisine,
    cohort: restaurant.cohort,
    price: restaurant.price,
    tags: JSON.stringify(restaurant.tags),
    asset: JSON.stringify(restaurant.asset),
    website_url: restaurant.websiteUrl,
    instagram_url: restaurant.instagramUrl,
    created_at: restaurant.createdAt,
    updated_at: restaurant.updatedAt,
    raw: JSON.stringify(restaurant.raw),
    content_hash: restaurantContentHash(restaurant),
    first_seen_at: seenAt,
    last_seen_at: seenAt,
    deleted_at: null,
  };
}

/** De-duplicated by id (the last wins), in id order: concurrent writers lock rows in one order. */
function lastById<T extends { id: string }>(items: readonly T[]): T[] {
  return [...new Map(items.map((item) => [item.id, item])).values()].sort(byId);
}

export function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * One page of `GET /restaurants`: upserts the current rows (one statement) and records a history
 * version for each restaurant whose content changed. Seeing a restaurant clears its `deleted_at`.
 * Run it in a transaction: rows and versions commit together.
 */
export async function upsertRestaurantPage(
  trx: Transaction<DB>,
  restaurants: readonly ListedRestaurant[],
  seenAt: Date,
  options: { recheckStoredVersions?: boolean } = {},
): Promise<VersionPlan> {
  const unique = lastById(restaurants);
  if (unique.length === 0) return { close: [], open: [], unchanged: [] };
  for (const chunk of statementChunks(unique, 16)) {
    await trx
      .insertInto('rewards.restaurants')
      .values(chunk.map((restaurant) => listedRow(restaurant, seenAt)))
      .onConflict((conflict) =>
        conflict.column('id').doUpdateSet((eb) => ({
          name: eb.ref('excluded.name'),
          cuisine: eb.ref('excluded.cuisine'),
          cohort: eb.ref('excluded.cohort'),
          price: eb.ref('excluded.price'),
          tags: eb.ref('excluded.tags'),
          asset: eb.ref('excluded.asset'),
          website_url: eb.ref('excluded.website_url'),
          instagram_url: eb.ref('excluded.instagram_url'),
          created_at: eb.ref('excluded.created_at'),
          updated_at: eb.ref('excluded.updated_at'),
          raw: eb.ref('excluded.raw'),
          content_hash: eb.ref('excluded.content_hash'),
          last_seen_at: eb.ref('excluded.last_seen_at'),
          deleted_at: null,
        })),
      )
      .execute();
  }
  return recordVersions(
    trx,
    'rewards.restaurants_history',
    unique.map((restaurant) => ({
      id: restaurant.id,
      hash: restaurantContentHash(restaurant),
      raw: restaurant.raw,
    })),
    seenAt,
    options.recheckStoredVersions === true ? rehashStoredRestaurant : undefined,
  );
}

/**
 * Restaurants embedded in locations (short `{id, object, name}` or fuller form): written only when
 * no row exists yet, so a row from `GET /restaurants` is never overwritten by a poorer form. No
 * history: the restaurants stream versions what the list shows.
 */
export async function insertEmbeddedRestaurants(
  db: Executor,
  restaurants: readonly Restaurant[],
  seenAt: Date,
): Promise<void> {
  // In id order, like every other writer of these rows: two pages inserting the same new
  // restaurants in different orders would deadlock on the primary key.
  const unique = lastById(restaurants).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const chunk of statementChunks(unique, 15)) {
    await db
      .insertInto('rewards.restaurants')
      .values(
        chunk.map((r) => ({
          id: r.id,
          name: r.name,
          ...(r.cuisine === undefined ? {} : { cuisine: r.cuisine }),
          cohort: r.cohort ?? null,
          price: r.price ?? null,
          ...(r.tags === undefined ? {} : { tags: JSON.stringify(r.tags) }),
          asset: r.asset === undefined ? null : JSON.stringify(r.asset),
          website_url: r.websiteUrl ?? null,
          instagram_url: r.instagramUrl ?? null,
          created_at: r.createdAt ?? null,
          updated_at: r.updatedAt ?? null,
          raw: JSON.stringify(r.raw),
          content_hash: restaurantContentHash(r),
          first_seen_at: seenAt,
          last_seen_at: seenAt,
        })),
      )
      .onConflict((conflict) => conflict.column('id').doNothing())
      .execute();
  }
}

/** Every known restaurant with its current version hash and deletion flag (the diff's "before"). */
export async function loadRestaurantStates(db: Executor): Promise<Map<string, PreviousRecord>> {
  const rows = await db
    .selectFrom('rewards.restaurants as r')
    .leftJoin('rewards.restaurants_history as h', (join) =>
      join.onRef('h.id', '=', 'r.id').on('h.valid_to', 'is', null),
    )
    .select(['r.id', 'r.deleted_at', 'h.content_hash'])
    .execute();
  return new Map(rows.map((row) => [row.id, { hash: row.content_hash, deleted: row.deleted_at !== null }]));
}

/** Marks restaurants absent from a complete pass; their current history version ends at `at`. */
export function markRestaurantsDeleted(
  trx: Transaction<DB>,
  ids: readonly string[],
  at: Date,
): Promise<number> {
  return markDeleted(
    trx,
    { current: 'rewards.restaurants', history: 'rewards.restaurants_history' },
    ids,
    at,
  );
}

/** Ids of restaurants not marked deleted (the challenges stream pages these). */
export async function liveRestaurantIds(db: Executor): Promise<string[]> {
  const rows = await db
    .selectFrom('rewards.restaurants')
    .select('id')
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .execute();
  return rows.map((row) => row.id);
}
