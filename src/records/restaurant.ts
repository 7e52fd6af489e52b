import { z } from 'zod';
import { recordParser, type RecordParser } from './parse.js';
import {
  compact,
  epochSecondsSchema,
  imageAssetSchema,
  int4Schema,
  isoTimestampSchema,
  uuidSchema,
  type ImageAsset,
} from './primitives.js';

/**
 * A restaurant. Two forms exist on the wire:
 * - `list`: `GET /restaurants` items, every field present, `created_at`/`updated_at` in epoch seconds;
 * - `embedded`: inside locations and check-ins, either the short form `{ id, object, name }` or a
 *   fuller one with ISO 8601 timestamps. Fields the payload does not carry are absent (not null),
 *   so a writer updates only what it was given.
 */
export interface Restaurant {
  form: 'list' | 'embedded';
  /** Lower-case UUID. */
  id: string;
  name: string;
  cuisine?: string[];
  /** Open string: values seen are `qsr` and `fsr`. */
  cohort?: string;
  price?: number;
  /** Shape of the items not specified; kept as received. */
  tags?: unknown[];
  /** Image URLs; they may carry an expiry query parameter (see `restaurantVersionContent`). */
  asset?: ImageAsset;
  websiteUrl?: string;
  instagramUrl?: string | null;
  createdAt?: Date;
  updatedAt?: Date;
  /** The record as received. */
  raw: unknown;
}

/** A restaurant from `GET /restaurants`: all fields present. */
export type ListedRestaurant = Restaurant & Required<Omit<Restaurant, 'raw'>> & { form: 'list' };

const restaurantFields = {
  id: uuidSchema,
  object: z.literal('restaurant'),
  name: z.string(),
  cuisine: z.array(z.string()),
  cohort: z.string(),
  price: int4Schema,
  tags: z.array(z.unknown()),
  asset: imageAssetSchema,
  website_url: z.string(),
  instagram_url: z.string().nullable(),
};

const listedRestaurantSchema = z.object({
  ...restaurantFields,
  created_at: epochSecondsSchema,
  updated_at: epochSecondsSchema,
});

const embeddedRestaurantSchema = z.object({
  id: restaurantFields.id,
  object: restaurantFields.object,
  name: restaurantFields.name,
  cuisine: restaurantFields.cuisine.optional(),
  cohort: restaurantFields.cohort.optional(),
  price: restaurantFields.price.optional(),
  tags: restaurantFields.tags.optional(),
  asset: restaurantFields.asset.optional(),
  website_url: restaurantFields.website_url.optional(),
  instagram_url: restaurantFields.instagram_url.optional(),
  created_at: isoTimestampSchema.optional(),
  updated_at: isoTimestampSchema.optional(),
});

type RestaurantWire = z.output<typeof embeddedRestaurantSchema>;

function toRestaurant(form: Restaurant['form'], wire: RestaurantWire, raw: unknown): Restaurant {
  return {
    form,
    id: wire.id,
    name: wire.name,
    ...compact({
      cuisine: wire.cuisine,
      cohort: wire.cohort,
      price: wire.price,
      tags: wire.tags,
      asset: wire.asset,
      websiteUrl: wire.website_url,
      instagramUrl: wire.instagram_url,
      createdAt: wire.created_at,
      updatedAt: wire.updated_at,
    }),
    raw,
  };
}

/** Schema of an embedded restaurant, for use inside other resources' schemas. */
export { embeddedRestaurantSchema };
export function embeddedRestaurantFromWire(wire: RestaurantWire, raw: unknown): Restaurant {
  return toRestaurant('embedded', wire, raw);
}

/** `GET /restaurants` item (epoch-second timestamps, every field required). */
export const parseListedRestaurant: RecordParser<ListedRestaurant> = recordParser(
  listedRestaurantSchema,
  (wire, raw) => toRestaurant('list', wire, raw) as ListedRestaurant,
);

/** A restaurant embedded in a location or check-in (short or full form, ISO timestamps). */
export const parseEmbeddedRestaurant: RecordParser<Restaurant> = recordParser(
  embeddedRestaurantSchema,
  (wire, raw) => toRestaurant('embedded', wire, raw),
);

function stripQuery(url: unknown): unknown {
  if (typeof url !== 'string') return url;
  const cut = url.search(/[?#]/);
  return cut === -1 ? url : url.slice(0, cut);
}

/**
 * What a restaurant snapshot should hash to decide on a new history version: the raw record with
 * the query strings of its asset URLs removed. The API signs image URLs with an expiry parameter,
 * so hashing the raw record would create a new version on every pass.
 */
export function restaurantVersionContent(restaurant: Pick<Restaurant, 'raw'>): unknown {
  const raw = restaurant.raw;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw;
  const asset: unknown = (raw as Record<string, unknown>)['asset'];
  if (typeof asset !== 'object' || asset === null || Array.isArray(asset)) return raw;
  const stableAsset = Object.fromEntries(Object.entries(asset).map(([key, url]) => [key, stripQuery(url)]));
  return { ...raw, asset: stableAsset };
}
