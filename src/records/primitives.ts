import { z } from 'zod';

/**
 * Value types shared by every partner-API resource: ids, timestamps, exact amounts, money.
 * The plain functions (`parseIsoTimestamp`, `epochSecondsToDate`, `parseDecimalString`) return a
 * result instead of throwing; the zod schemas wrap them so that a failure becomes an issue at the
 * field's path.
 */

export type ValueResult<T> = { ok: true; value: T } | { ok: false; reason: string };

// ---------------------------------------------------------------------------------------------
// UUID

// Any 8-4-4-4-12 hex id: the API never promised a UUID version or variant, and Postgres `uuid`
// accepts exactly this shape.
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_PATTERN.test(value);
}

/** A UUID string, lower-cased so ids from different endpoints compare equal. */
export const uuidSchema = z
  .string()
  .regex(UUID_PATTERN, { message: 'not a UUID' })
  .transform((value) => value.toLowerCase());

// ---------------------------------------------------------------------------------------------
// Timestamps

// Extended-format ISO 8601 / RFC 3339 date-time with a mandatory offset. A time without an offset
// is a local time in an unknown zone, so it is rejected rather than guessed.
const ISO_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)$/;

/**
 * Earliest and latest instants we accept: the four-digit years 0001-9999. Year 0000 is valid ISO
 * 8601 but Postgres has no year 0 (1 BC comes before AD 1) and refuses it.
 */
const MIN_EPOCH_SECONDS = -62_135_596_800; // 0001-01-01T00:00:00Z
const MAX_EPOCH_SECONDS = 253_402_300_799; // 9999-12-31T23:59:59Z

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Parses an ISO 8601 date-time (`Z` or `±hh:mm` / `±hhmm` / `±hh` offset, optional seconds,
 * optional fraction of any length) into a `Date`. Calendar-impossible values (month 13, Feb 30,
 * hour 25) are rejected, unlike `new Date()`, which silently rolls them over. Fractions finer than
 * a millisecond are truncated (a `Date` holds milliseconds).
 */
export function parseIsoTimestamp(text: string): ValueResult<Date> {
  const parsed = parseIsoTimestampMs(text);
  return parsed.ok ? { ok: true, value: new Date(parsed.value) } : parsed;
}

/**
 * `parseIsoTimestamp` as epoch milliseconds: for records kept by the thousand (a feed check-in),
 * where a `Date` (about 100 bytes) per timestamp was the largest thing a backfill promoted to the
 * old generation (issue 39).
 */
export function parseIsoTimestampMs(text: string): ValueResult<number> {
  const match = ISO_PATTERN.exec(text);
  if (match === null) return { ok: false, reason: 'not an ISO 8601 timestamp with an offset' };
  // The pattern fixes where each digit pair is; reading them by char code, not Number(group),
  // makes this ~3x faster, which matters at six timestamps per feed check-in.
  const year = twoDigits(text, 0) * 100 + twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  const hour = twoDigits(text, 11);
  const minute = twoDigits(text, 14);
  const [, , mo, , , , s, fraction, zulu, sign, offH, offM] = match;
  const second = s === undefined ? 0 : twoDigits(text, 17);
  if (year < 1) return { ok: false, reason: 'year 0000 cannot be stored (Postgres has no year 0)' };
  if (month < 1 || month > 12) return { ok: false, reason: `month ${month} out of range` };
  if (day < 1 || day > daysInMonth(year, month)) {
    return { ok: false, reason: `day ${day} out of range for ${text.slice(0, 4)}-${mo}` };
  }
  if (hour > 23) return { ok: false, reason: `hour ${hour} out of range` };
  if (minute > 59) return { ok: false, reason: `minute ${minute} out of range` };
  // A leap second (:60) cannot be represented by a Date; rejecting it keeps instants exact.
  if (second > 59) return { ok: false, reason: `second ${second} out of range` };
  let offsetMinutes = 0;
  if (zulu === undefined) {
    const oh = Number(offH);
    const om = offM === undefined ? 0 : Number(offM);
    if (oh > 23 || om > 59)
      return { ok: false, reason: `offset ${sign}${offH}:${offM ?? '00'} out of range` };
    offsetMinutes = (sign === '-' ? -1 : 1) * (oh * 60 + om);
  }
  let millis = 0;
  for (let i = 0; i < 3; i++)
    millis = millis * 10 + (fraction !== undefined && i < fraction.length ? fraction.charCodeAt(i) - 48 : 0);
  const minutes = (daysFromCivil(year, month, day) * 24 + hour) * 60 + minute - offsetMinutes;
  return { ok: true, value: (minutes * 60 + second) * 1000 + millis };
}

function twoDigits(text: string, at: number): number {
  return (text.charCodeAt(at) - 48) * 10 + (text.charCodeAt(at + 1) - 48);
}

/**
 * Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil). Plain
 * arithmetic: `Date.UTC` maps years 0-99 to 1900-1999 and `setUTCFullYear` is slow.
 */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** Converts integer Unix epoch seconds to a `Date`; rejects fractions and years outside 0001-9999. */
export function epochSecondsToDate(seconds: number): ValueResult<Date> {
  if (!Number.isSafeInteger(seconds)) return { ok: false, reason: 'not an integer number of epoch seconds' };
  // Also catches epoch milliseconds sent by mistake: they land beyond year 9999.
  if (seconds < MIN_EPOCH_SECONDS || seconds > MAX_EPOCH_SECONDS) {
    return { ok: false, reason: `epoch seconds ${seconds} outside years 0001-9999 (milliseconds?)` };
  }
  return { ok: true, value: new Date(seconds * 1000) };
}

function preview(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

/** ISO 8601 string -> `Date`. */
export const isoTimestampSchema = z.string().transform((text, ctx): Date => {
  const result = parseIsoTimestamp(text);
  if (result.ok) return result.value;
  ctx.issues.push({
    code: 'custom',
    message: `not an ISO 8601 timestamp: ${result.reason} (${preview(text)})`,
    input: text,
  });
  return z.NEVER;
});

/** ISO 8601 string or null -> `Date | null`. */
export const nullableIsoTimestampSchema = isoTimestampSchema.nullable();

/** Integer Unix epoch seconds -> `Date` (only where the spec says epoch). */
export const epochSecondsSchema = z.number().transform((seconds, ctx): Date => {
  const result = epochSecondsToDate(seconds);
  if (result.ok) return result.value;
  ctx.issues.push({ code: 'custom', message: result.reason, input: seconds });
  return z.NEVER;
});

// ---------------------------------------------------------------------------------------------
// Exact amounts

declare const decimalStringBrand: unique symbol;

/**
 * A non-negative integer written in base 10 without sign, exponent, fraction or leading zeros,
 * of at most 78 digits (the warehouse stores these as `numeric(78,0)`). Exact: never convert it to
 * a `Number`; use `BigInt(value)` for arithmetic.
 */
export type DecimalString = string & { readonly [decimalStringBrand]: true };

export const MAX_DECIMAL_DIGITS = 78;

/** Validates a big-integer amount string; leading zeros are dropped so equal amounts compare equal. */
export function parseDecimalString(text: string): ValueResult<DecimalString> {
  if (!/^[0-9]+$/.test(text)) {
    return { ok: false, reason: `not a non-negative integer digit string (${preview(text)})` };
  }
  const canonical = text.replace(/^0+(?=[0-9])/, '');
  if (canonical.length > MAX_DECIMAL_DIGITS) {
    return { ok: false, reason: `more than ${MAX_DECIMAL_DIGITS} digits` };
  }
  return { ok: true, value: canonical as DecimalString };
}

/** Writes a non-negative bigint as a `DecimalString` (for tests and the simulator). */
export function decimalStringFromBigInt(value: bigint): ValueResult<DecimalString> {
  if (value < 0n) return { ok: false, reason: 'negative amount' };
  return parseDecimalString(value.toString());
}

/**
 * A big-integer amount. Only strings are accepted: a JSON number may already have lost digits
 * in the parser, and a float or exponent is never a smallest-unit amount.
 */
export const decimalStringSchema = z.string().transform((text, ctx): DecimalString => {
  const result = parseDecimalString(text);
  if (result.ok) return result.value;
  ctx.issues.push({ code: 'custom', message: result.reason, input: text });
  return z.NEVER;
});

/** USD integer cents: a safe integer (exact as a JS number). */
export const centsSchema = z.int();

// ---------------------------------------------------------------------------------------------
// Currency and money

/** Currency codes arrive in mixed case across endpoints; we store and compare them lower-case. */
export const currencySchema = z
  .string()
  .min(1, { message: 'empty currency code' })
  .transform((code) => code.toLowerCase());

/** Money whose value is a big-integer string in the smallest unit (tokens, challenge amounts). */
export interface DecimalMoney {
  value: DecimalString;
  /** Lower-case. */
  currency: string;
}

/** Money whose value is integer cents (USD amounts). */
export interface CentsMoney {
  value: number;
  /** Lower-case. */
  currency: string;
}

export const decimalMoneySchema = z.object({ value: decimalStringSchema, currency: currencySchema });
export const centsMoneySchema = z.object({ value: centsSchema, currency: currencySchema });

// ---------------------------------------------------------------------------------------------
// Misc

/** Postgres `integer` bounds: a value beyond them is refused by its column, failing the whole page. */
export const INT4_MIN = -2_147_483_648;
export const INT4_MAX = 2_147_483_647;

/** An integer stored in an `integer` column. */
export const int4Schema = z
  .int()
  .min(INT4_MIN, { message: 'below the 32-bit integer range of its column' })
  .max(INT4_MAX, { message: 'above the 32-bit integer range of its column' });

/** Non-negative integer within `integer` (counts, thresholds, page numbers). */
export const countSchema = z
  .int()
  .min(0)
  .max(INT4_MAX, { message: 'above the 32-bit integer range of its column' });

/** `YYYY-MM-DD` calendar date, kept as a string (it has no time zone, so a Date would shift it). */
export const calendarDateSchema = z.string().refine(
  (text) => {
    const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
    if (match === null) return false;
    const year = Number(match[1]);
    const month = Number(match[2]);
    const day = Number(match[3]);
    return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
  },
  { message: 'not a YYYY-MM-DD calendar date' },
);

/** An image asset: `preview_1x`, `web_2x`, `full_3x` URLs, kept in the API's shape for jsonb storage. */
export const imageAssetSchema = z.looseObject({
  preview_1x: z.string(),
  web_2x: z.string(),
  full_3x: z.string(),
});
export type ImageAsset = z.output<typeof imageAssetSchema>;

/** Builds an object without the keys whose value is `undefined`: absent stays absent. */
export type Compact<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
};

export function compact<T extends object>(value: T): Compact<T> {
  const out: Record<string, unknown> = {};
  // for…in, not Object.entries: no array per field (this runs for every embedded location).
  for (const key in value) {
    const field = (value as Record<string, unknown>)[key];
    if (field !== undefined && Object.hasOwn(value, key)) out[key] = field;
  }
  return out as Compact<T>;
}
