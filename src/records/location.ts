import { z } from 'zod';
import { addedDriftOf, knownShapeOf, unknownFieldsOf } from './known-shape.js';
import { recordParser, reject, type ParseResult, type RecordParser } from './parse.js';
import { driftFromIssues, type FieldDrift } from './schema-drift.js';
import { formatJsonPath } from './storable.js';
import { compact, isoTimestampSchema, uuidSchema } from './primitives.js';
import { embeddedRestaurantFromWire, embeddedRestaurantSchema, type Restaurant } from './restaurant.js';

export interface Neighborhood {
  /** Lower-case UUID. */
  id: string;
  name: string;
  region: string;
}

export interface Address {
  street: string;
  street2: string;
  city: string;
  state: string;
  zipcode: string;
  country: string;
}

export interface Coordinate {
  latitude: number;
  longitude: number;
}

/**
 * A location, whichever form it came in:
 * - `full`: venue check-in feed, every field;
 * - `reduced`: `GET /locations/{id}` (id, name, restaurant, neighborhood, address, coordinate,
 *   time_zone, payments_enabled, is_club);
 * - `short`: check-ins from member history and single retrieval (id, name, restaurant, neighborhood).
 * Fields the form does not carry are absent (never null), so a writer that updates only the
 * present fields never overwrites what a fuller form gave.
 */
export interface Location {
  form: 'full' | 'reduced' | 'short';
  /** Lower-case UUID. */
  id: string;
  name: string;
  restaurant: Restaurant;
  restaurantId: string;
  neighborhood: Neighborhood;
  neighborhoodId: string;
  slug?: string;
  address?: Address;
  coordinate?: Coordinate;
  phoneNumber?: string;
  /** IANA zone name. */
  timeZone?: string;
  paymentsEnabled?: boolean;
  isClub?: boolean;
  reservationUrl?: string | null;
  reservationsEnabled?: boolean;
  googlePlaceId?: string | null;
  createdAt?: Date;
  updatedAt?: Date;
  /** The record as received. */
  raw: unknown;
}

/** A location in its full form: every field present. */
export type FullLocation = Location & Required<Omit<Location, 'raw'>> & { form: 'full' };

export function isFullLocation(location: Location): location is FullLocation {
  return location.form === 'full';
}

export const neighborhoodSchema = z.object({
  id: uuidSchema,
  object: z.literal('neighborhood'),
  name: z.string(),
  region: z.string(),
});

const addressSchema = z.object({
  street: z.string(),
  street2: z.string(),
  city: z.string(),
  state: z.string(),
  zipcode: z.string(),
  country: z.string(),
});

const coordinateSchema = z.object({
  latitude: z.number().min(-90).max(90),
  longitude: z.number().min(-180).max(180),
});

const shortFields = {
  id: uuidSchema,
  object: z.literal('location'),
  name: z.string(),
  restaurant: embeddedRestaurantSchema,
  neighborhood: neighborhoodSchema,
};

const reducedFields = {
  ...shortFields,
  address: addressSchema,
  coordinate: coordinateSchema,
  time_zone: z.string().min(1),
  payments_enabled: z.boolean(),
  is_club: z.boolean(),
};

const fullFields = {
  ...reducedFields,
  slug: z.string(),
  phone_number: z.string(),
  reservation_url: z.string().nullable(),
  reservations_enabled: z.boolean(),
  google_place_id: z.string().nullable(),
  created_at: isoTimestampSchema,
  updated_at: isoTimestampSchema,
};

export const shortLocationSchema = z.object(shortFields);
export const reducedLocationSchema = z.object(reducedFields);
export const fullLocationSchema = z.object(fullFields);

/** The wire shape every form narrows to (fields outside the form are undefined). */
type FullWire = z.output<typeof fullLocationSchema>;
type LocationWire = z.output<typeof shortLocationSchema> & {
  [K in keyof FullWire]?: FullWire[K] | undefined;
};

function field(raw: unknown, key: string): unknown {
  return typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>)[key] : undefined;
}

/** Maps a location validated by one of the form schemas to the domain type. */
export function locationFromWire(form: Location['form'], wire: LocationWire, raw: unknown): Location {
  const restaurant = embeddedRestaurantFromWire(wire.restaurant, field(raw, 'restaurant'));
  const neighborhood = wire.neighborhood;
  return {
    form,
    id: wire.id,
    name: wire.name,
    restaurant,
    restaurantId: restaurant.id,
    neighborhood: { id: neighborhood.id, name: neighborhood.name, region: neighborhood.region },
    neighborhoodId: neighborhood.id,
    ...compact({
      slug: wire.slug,
      address: wire.address,
      coordinate: wire.coordinate,
      phoneNumber: wire.phone_number,
      timeZone: wire.time_zone,
      paymentsEnabled: wire.payments_enabled,
      isClub: wire.is_club,
      reservationUrl: wire.reservation_url,
      reservationsEnabled: wire.reservations_enabled,
      googlePlaceId: wire.google_place_id,
      createdAt: wire.created_at,
      updatedAt: wire.updated_at,
    }),
    raw,
  };
}

/** A full-form location (as embedded in the venue check-in feed). */
export const parseFullLocation: RecordParser<FullLocation> = recordParser(
  fullLocationSchema,
  (wire, raw) => locationFromWire('full', wire, raw) as FullLocation,
);

/** `GET /locations/{id}`: the reduced form. */
export const parseReducedLocation: RecordParser<Location> = recordParser(reducedLocationSchema, (wire, raw) =>
  locationFromWire('reduced', wire, raw),
);

/** The short form embedded in member check-ins and single check-in retrieval. */
export const parseShortLocation: RecordParser<Location> = recordParser(shortLocationSchema, (wire, raw) =>
  locationFromWire('short', wire, raw),
);

/** The neighborhood of a location (stored in `neighborhoods`). */
export const parseNeighborhood: RecordParser<Neighborhood> = recordParser(neighborhoodSchema, (wire) => ({
  id: wire.id,
  name: wire.name,
  region: wire.region,
}));

/**
 * `GET /locations/{id}/open_hours`. Its shape is not specified, so the body is kept as JSON; we
 * only require an object or an array, which is what `location_open_hours.hours jsonb` stores.
 */
export interface OpenHours {
  hours: Record<string, unknown> | unknown[];
}

/**
 * The shape the service expects of open hours, for drift only: the simulator's reading
 * (docs/simulator.md), since the spec shows none. A body that differs is still stored whole and
 * never rejected for its fields; the difference is reported as schema drift (docs/schema-drift.md).
 */
const openHoursShapeSchema = z.object({
  object: z.literal('open_hours'),
  location: uuidSchema,
  time_zone: z.string(),
  open_hours: z.array(z.object({ day_of_week: z.int(), opens_at: z.string(), closes_at: z.string() })),
});
const OPEN_HOURS_SHAPE = knownShapeOf(openHoursShapeSchema);

/** How open hours differ from the expected shape: fields added (any depth), missing or retyped. */
export function openHoursDrift(raw: unknown): FieldDrift[] {
  const checked = openHoursShapeSchema.safeParse(raw);
  const drift = addedDriftOf(unknownFieldsOf(raw, OPEN_HOURS_SHAPE), OPEN_HOURS_SHAPE);
  if (checked.success) return drift;
  const whole = checked.error.issues.some(
    (issue) => issue.path.length === 0 && issue.code === 'invalid_type',
  );
  if (whole) return [{ fieldPath: '(record)', change: 'type_changed', example: raw }];
  return [...drift, ...driftFromIssues(checked.error.issues, raw, formatJsonPath)];
}

export function parseOpenHours(raw: unknown): ParseResult<OpenHours> {
  const drift = openHoursDrift(raw);
  const withDrift = drift.length === 0 ? {} : { drift };
  if (Array.isArray(raw)) return { ok: true, record: { hours: raw as unknown[] }, ...withDrift };
  if (typeof raw === 'object' && raw !== null) {
    return { ok: true, record: { hours: raw as Record<string, unknown> }, ...withDrift };
  }
  const rejected = reject(
    raw,
    `(record): expected an object or array of open hours, got ${raw === null ? 'null' : typeof raw}`,
  );
  rejected.rejection.drift = drift;
  return rejected;
}
