import { z } from 'zod';
import { contentMemo, memoizedByContent } from './content-memo.js';
import { recordParser, type ParseResult, type RecordParser } from './parse.js';
import {
  fullLocationSchema,
  locationFromWire,
  shortLocationSchema,
  type Location,
  type Neighborhood,
} from './location.js';
import { knownShapeOf, unknownFieldsOf } from './known-shape.js';
import {
  isoTimestampSchema,
  isUuid,
  nullableIsoTimestampSchema,
  parseIsoTimestampMs,
  uuidSchema,
} from './primitives.js';

/** A visit. Check-ins carry no member identity. */
export interface CheckIn {
  /** Lower-case UUID. */
  id: string;
  /**
   * Visit start, epoch milliseconds; the feed's date filters apply to it. Numbers, not `Date`s:
   * a backfill holds a few thousand records at a time (issue 39, src/records/primitives.ts).
   */
  createdAtMs: number;
  /** Visit end, epoch milliseconds; null while the visit is ongoing. */
  endedAtMs: number | null;
  svcPayEnabled: boolean;
  /** Full form in the venue feed, short form in member history and single retrieval. */
  location: Location;
  locationId: string;
  restaurantId: string;
  neighborhoodId: string;
  neighborhood: Neighborhood;
  /** The record as received. */
  raw: unknown;
  /** Its top-level fields the parser does not know (docs/schema-drift.md); null or absent when none. */
  extra?: Record<string, unknown> | null;
}

/** The oldest `createdAtMs` of `records`; undefined when there are none. */
export function oldestCreatedAtMs(records: readonly Pick<CheckIn, 'createdAtMs'>[]): number | undefined {
  if (records.length === 0) return undefined;
  let oldest = Number.POSITIVE_INFINITY;
  for (const record of records) oldest = Math.min(oldest, record.createdAtMs);
  return oldest;
}

/** The check-in fields around a location parsed (and remembered by content) by `location`. */
function checkInSchema(location: z.ZodType<Location>) {
  return z.object({
    id: uuidSchema,
    object: z.literal('check_in'),
    location,
    svc_pay_enabled: z.boolean(),
    created_at: isoTimestampSchema,
    ended_at: nullableIsoTimestampSchema,
  });
}

const feedLocations = contentMemo(fullLocationSchema, (wire, raw) => locationFromWire('full', wire, raw));
const feedCheckInSchema = checkInSchema(feedLocations.schema);
const shortCheckInSchema = checkInSchema(
  memoizedByContent(shortLocationSchema, (wire, raw) => locationFromWire('short', wire, raw)),
);

function toCheckIn(
  wire: z.output<typeof feedCheckInSchema>,
  raw: unknown,
  extra: Record<string, unknown> | null,
): CheckIn {
  const location = wire.location;
  return {
    id: wire.id,
    createdAtMs: wire.created_at.getTime(),
    endedAtMs: wire.ended_at?.getTime() ?? null,
    svcPayEnabled: wire.svc_pay_enabled,
    location,
    locationId: location.id,
    restaurantId: location.restaurantId,
    neighborhoodId: location.neighborhoodId,
    neighborhood: location.neighborhood,
    raw,
    extra,
  };
}

/** The location's schema checks its storability, once per content. */
const LOCATION_CHECKED_BY_SCHEMA = { storabilityCheckedBySchema: ['location'] };

/** `GET /check_ins` items through the general parser (zod, schema drift, storability walks). */
export const parseFeedCheckInGeneral: RecordParser<CheckIn> = recordParser(
  feedCheckInSchema,
  toCheckIn,
  LOCATION_CHECKED_BY_SCHEMA,
);

const FEED_KEYS = new Set(['id', 'object', 'location', 'svc_pay_enabled', 'created_at', 'ended_at']);
const FULL_LOCATION_SHAPE = knownShapeOf(fullLocationSchema);
/** Per remembered location (memoizedByContent returns one object per content): unknown fields inside? */
const locationHasUnknownFields = new WeakMap<Location, boolean>();

/**
 * The venue feed's known shape, checked by hand (issue 39: zod, the drift walk and the
 * storability walk were 3–3.5 s of a 200,000-row backfill's 16.7 CPU-s): exactly the six fields,
 * a UUID, the literal, a boolean, timestamps the general parser accepts, and a location its
 * memoized schema accepts with no unknown field inside. Such a record cannot hold anything
 * unstorable (every string is matched by a pattern; the location is checked by its schema) nor
 * any drift. Anything else returns null and takes the general parser, which then decides
 * (rejection, drift, extra); the result is the same either way (test/unit/records/check-in-fast-path.test.ts).
 */
function knownFeedCheckIn(raw: unknown): ParseResult<CheckIn> | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const record = raw as Record<string, unknown>;
  let fields = 0;
  for (const key in record) {
    if (!FEED_KEYS.has(key) || !Object.hasOwn(record, key)) return null;
    fields++;
  }
  if (fields !== FEED_KEYS.size) return null;
  const { id, object, svc_pay_enabled: pay, created_at: created, ended_at: ended } = record;
  if (!isUuid(id) || object !== 'check_in' || typeof pay !== 'boolean' || typeof created !== 'string')
    return null;
  const createdAt = parseIsoTimestampMs(created);
  if (!createdAt.ok) return null;
  let endedAtMs: number | null = null;
  if (ended !== null) {
    if (typeof ended !== 'string') return null;
    const parsed = parseIsoTimestampMs(ended);
    if (!parsed.ok) return null;
    endedAtMs = parsed.value;
  }
  // A location seen before, unchanged, skips zod's call (most of a page's records).
  let location = feedLocations.remembered(record['location']);
  if (location === undefined) {
    const parsedLocation = feedLocations.schema.safeParse(record['location']);
    if (!parsedLocation.success) return null;
    location = parsedLocation.data;
  }
  let unknownInside = locationHasUnknownFields.get(location);
  if (unknownInside === undefined) {
    unknownInside = unknownFieldsOf(record['location'], FULL_LOCATION_SHAPE) !== null;
    locationHasUnknownFields.set(location, unknownInside);
  }
  if (unknownInside) return null;
  return {
    ok: true,
    record: {
      id: id.toLowerCase(),
      createdAtMs: createdAt.value,
      endedAtMs,
      svcPayEnabled: pay,
      location,
      locationId: location.id,
      restaurantId: location.restaurantId,
      neighborhoodId: location.neighborhoodId,
      neighborhood: location.neighborhood,
      // Equal in content to the record received, built from its own small values and the
      // remembered location's raw (equal in content to this record's location, memoizedByContent):
      // a page's parsed wire objects (about 3 kB a record with its location) are garbage once
      // parsed, instead of living through the page's write and the next page's prefetch and being
      // promoted to the old generation (the pass's peak RSS, issue 39).
      raw: {
        id,
        object,
        location: location.raw,
        svc_pay_enabled: pay,
        created_at: created,
        ended_at: ended,
      },
      extra: null,
    },
    extra: null,
  };
}

/** `GET /check_ins` items: the venue feed, with the full location form (known shape first). */
export const parseFeedCheckIn: RecordParser<CheckIn> = (raw) => {
  try {
    return knownFeedCheckIn(raw) ?? parseFeedCheckInGeneral(raw);
  } catch {
    return parseFeedCheckInGeneral(raw);
  }
};

/** `GET /check_ins/{id}` and `GET /users/me/check_ins` items: location in its short form. */
export const parseShortFormCheckIn: RecordParser<CheckIn> = recordParser(
  shortCheckInSchema,
  toCheckIn,
  LOCATION_CHECKED_BY_SCHEMA,
);
