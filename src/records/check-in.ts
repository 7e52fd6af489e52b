import { z } from 'zod';
import { memoizedByContent } from './content-memo.js';
import { recordParser, type RecordParser } from './parse.js';
import {
  fullLocationSchema,
  locationFromWire,
  shortLocationSchema,
  type Location,
  type Neighborhood,
} from './location.js';
import { isoTimestampSchema, nullableIsoTimestampSchema, uuidSchema } from './primitives.js';

/** A visit. Check-ins carry no member identity. */
export interface CheckIn {
  /** Lower-case UUID. */
  id: string;
  /** Visit start; the feed's date filters apply to it. */
  createdAt: Date;
  /** Visit end; null while the visit is ongoing. */
  endedAt: Date | null;
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

const feedCheckInSchema = checkInSchema(
  memoizedByContent(fullLocationSchema, (wire, raw) => locationFromWire('full', wire, raw)),
);
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
    createdAt: wire.created_at,
    endedAt: wire.ended_at,
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

/** `GET /check_ins` items: the venue feed, with the full location form. */
export const parseFeedCheckIn: RecordParser<CheckIn> = recordParser(
  feedCheckInSchema,
  toCheckIn,
  LOCATION_CHECKED_BY_SCHEMA,
);

/** `GET /check_ins/{id}` and `GET /users/me/check_ins` items: location in its short form. */
export const parseShortFormCheckIn: RecordParser<CheckIn> = recordParser(
  shortCheckInSchema,
  toCheckIn,
  LOCATION_CHECKED_BY_SCHEMA,
);
