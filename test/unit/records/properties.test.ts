import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  contentHash,
  decimalMoneySchema,
  epochSecondsToDate,
  parseAccountBalance,
  parseChallenge,
  parseChallengePage,
  parseDecimalString,
  parseEmbeddedRestaurant,
  parseFeedCheckIn,
  parseFeedCheckInPage,
  parseFullLocation,
  parseIsoTimestamp,
  parseListedRestaurant,
  parseMemberCheckInPage,
  parseMemberStatus,
  parseMembership,
  parseMembershipPage,
  parseNeighborhood,
  parseOpenHours,
  parsePaymentIntent,
  parsePaymentIntentCancelResponse,
  parsePaymentIntentConfirmResponse,
  parsePaymentIntentListItem,
  parsePaymentIntentPage,
  parseReducedLocation,
  parseRestaurantPage,
  parseShortFormCheckIn,
  parseShortLocation,
  parseUser,
  parseUserTag,
  parseUserTagList,
  parseUserWallet,
  parseWalletList,
  type ParseResult,
} from '../../../src/records/index.js';
import * as fx from './fixtures.js';

type AnyParser = (raw: unknown) => ParseResult<unknown>;

const parsers: [string, AnyParser, () => unknown][] = [
  ['listed restaurant', parseListedRestaurant, fx.listedRestaurant],
  ['embedded restaurant', parseEmbeddedRestaurant, fx.embeddedFullRestaurant],
  ['neighborhood', parseNeighborhood, fx.neighborhood],
  ['full location', parseFullLocation, fx.fullLocation],
  ['reduced location', parseReducedLocation, fx.reducedLocation],
  ['short location', parseShortLocation, fx.shortLocation],
  ['open hours', parseOpenHours, () => ({ mon: [] })],
  ['feed check-in', parseFeedCheckIn, fx.feedCheckIn],
  ['short-form check-in', parseShortFormCheckIn, fx.shortFormCheckIn],
  ['user', parseUser, fx.user],
  ['status', parseMemberStatus, fx.memberStatus],
  ['wallet', parseUserWallet, fx.userWallet],
  ['tag', parseUserTag, fx.userTag],
  ['membership', parseMembership, fx.membership],
  ['payment intent', parsePaymentIntent, fx.fullPaymentIntent],
  ['payment intent list item', parsePaymentIntentListItem, fx.listPaymentIntent],
  [
    'confirm response',
    parsePaymentIntentConfirmResponse,
    () => ({ ...fx.listPaymentIntent(), paid_at: null }),
  ],
  [
    'cancel response',
    parsePaymentIntentCancelResponse,
    () => ({ ...fx.listPaymentIntent(), canceled_at: null }),
  ],
  ['challenge', parseChallenge, fx.challenge],
  ['account balance', parseAccountBalance, fx.accountBalance],
];

type AnyEnvelopeParser = (raw: unknown) => { ok: true } | { ok: false; reason: string };

const envelopeParsers: [string, AnyEnvelopeParser, () => unknown][] = [
  [
    'restaurant page',
    parseRestaurantPage,
    () => ({ restaurants: [fx.listedRestaurant()], pagination: fx.pagination() }),
  ],
  [
    'feed check-in page',
    parseFeedCheckInPage,
    () => ({ check_ins: [fx.feedCheckIn()], pagination: fx.pagination() }),
  ],
  [
    'member check-in page',
    parseMemberCheckInPage,
    () => ({ check_ins: [fx.shortFormCheckIn()], pagination: fx.pagination() }),
  ],
  [
    'membership page',
    parseMembershipPage,
    () => ({ memberships: [fx.membership()], pagination: fx.pagination() }),
  ],
  [
    'intent page',
    parsePaymentIntentPage,
    () => ({ payment_intents: [fx.listPaymentIntent()], pagination: fx.pagination() }),
  ],
  [
    'challenge page',
    parseChallengePage,
    () => ({ challenges: [fx.challenge()], pagination: fx.pagination() }),
  ],
  ['wallet list', parseWalletList, () => ({ wallets: [fx.userWallet()] })],
  ['tag list', parseUserTagList, () => ({ tags: [fx.userTag()] })],
];

// --- arbitraries ------------------------------------------------------------------------------

/** Anything at all, beyond JSON: bigints, Dates, Maps, boxed values, sparse arrays, null prototypes. */
const anything = fc.anything({
  withBigInt: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withBoxedValues: true,
  withNullPrototype: true,
  withSparseArray: true,
  withTypedArray: true,
  withObjectString: true,
});

/** Values that look like what an API might put in a field: wrong types, huge numbers, odd dates. */
const nastyValue = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom(
    null,
    '',
    'NaN',
    '2024-02-30T00:00:00Z',
    '2024-13-01T00:00:00Z',
    '1e30',
    '-1',
    '1.0',
    '18446744073709551616',
    '00000000-0000-0000-0000-000000000000',
    1e308,
    -0,
    2 ** 53 + 2,
    Number.MAX_VALUE,
    [],
    {},
  ),
  fc.double(),
  fc.bigInt().map((n) => n.toString()),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
);

type Path = (string | number)[];

/** Every path inside a JSON-ish value, the root included. */
function paths(value: unknown, prefix: Path = []): Path[] {
  const out: Path[] = [prefix];
  if (Array.isArray(value)) value.forEach((item, i) => out.push(...paths(item, [...prefix, i])));
  else if (typeof value === 'object' && value !== null) {
    for (const [key, field] of Object.entries(value)) out.push(...paths(field, [...prefix, key]));
  }
  return out;
}

/** Returns a deep copy of `value` with the node at `path` replaced (or deleted when `del`). */
function mutateAt(value: unknown, path: Path, replacement: unknown, del = false): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    const copy = [...value];
    if (rest.length === 0 && del) copy.splice(head as number, 1);
    else copy[head as number] = mutateAt(copy[head as number], rest, replacement, del);
    return copy;
  }
  const copy = { ...(value as Record<string, unknown>) };
  if (rest.length === 0 && del) delete copy[head as string];
  else copy[head as string] = mutateAt(copy[head as string], rest, replacement, del);
  return copy;
}

function mutatedRecord(fixture: () => unknown) {
  const base = fixture();
  const all = paths(base);
  return fc
    .tuple(fc.nat({ max: all.length - 1 }), nastyValue, fc.boolean())
    .map(([i, replacement, del]) => mutateAt(base, all[i]!, replacement, del && all[i]!.length > 0));
}

/** Checks the output invariants: valid Dates, no NaN, no own property explicitly set to undefined. */
function assertWellFormed(value: unknown, where = 'record'): void {
  if (value instanceof Date) {
    expect(Number.isNaN(value.getTime()), where).toBe(false);
    return;
  }
  if (typeof value === 'number') expect(Number.isFinite(value), where).toBe(true);
  if (Array.isArray(value)) value.forEach((item, i) => assertWellFormed(item, `${where}[${i}]`));
  else if (typeof value === 'object' && value !== null) {
    for (const [key, field] of Object.entries(value)) {
      if (key === 'raw' || key === 'extra' || key === 'hours' || key === 'tags') continue;
      expect(field, `${where}.${key} is present but undefined`).not.toBeUndefined();
      assertWellFormed(field, `${where}.${key}`);
    }
  }
}

function assertRecordOrRejection(result: ParseResult<unknown>, input: unknown): void {
  if (result.ok) {
    assertWellFormed(result.record);
  } else {
    expect(result.rejection.reason.length).toBeGreaterThan(0);
    expect(result.rejection.payload).toBe(input);
    expect(result.rejection.recordId === null || typeof result.rejection.recordId === 'string').toBe(true);
  }
}

// --- (a) fuzz ---------------------------------------------------------------------------------

describe('FUZZ: parsers never throw; they return a well-formed record or a reasoned rejection', () => {
  it.each(parsers)('%s: valid fixture parses', (_name, parse, fixture) => {
    const result = parse(fixture());
    expect(result.ok).toBe(true);
    assertRecordOrRejection(result, undefined);
  });

  it.each(parsers)('%s: arbitrary values', (_name, parse) => {
    fc.assert(
      fc.property(fc.oneof(anything, fc.jsonValue()), (input) => {
        assertRecordOrRejection(parse(input), input);
      }),
      { numRuns: 300 },
    );
  });

  it.each(parsers)('%s: valid records with one field mutated or removed', (_name, parse, fixture) => {
    fc.assert(
      fc.property(mutatedRecord(fixture), (input) => {
        assertRecordOrRejection(parse(input), input);
      }),
      { numRuns: 300 },
    );
  });

  it.each(envelopeParsers)('%s: arbitrary and mutated envelopes', (_name, parse, fixture) => {
    fc.assert(
      fc.property(fc.oneof(anything, fc.jsonValue(), mutatedRecord(fixture)), (input) => {
        const result = parse(input);
        if (!result.ok) expect(result.reason.length).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });
});

// --- (b) round trips --------------------------------------------------------------------------

function pad(n: number, width: number): string {
  return String(Math.abs(n)).padStart(width, '0');
}

/** Writes `instant` as local time at `offsetMinutes`, with `fractionDigits` digits of fraction. */
function formatIso(
  instant: Date,
  offsetMinutes: number,
  fractionDigits: number,
  extraDigits: string,
  style: string,
) {
  const local = new Date(instant.getTime() + offsetMinutes * 60_000);
  const date = `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1, 2)}-${pad(local.getUTCDate(), 2)}`;
  const time = `${pad(local.getUTCHours(), 2)}:${pad(local.getUTCMinutes(), 2)}:${pad(local.getUTCSeconds(), 2)}`;
  const ms = pad(local.getUTCMilliseconds(), 3);
  const fraction = fractionDigits === 0 ? '' : `.${(ms + extraDigits).slice(0, fractionDigits)}`;
  const sign = offsetMinutes < 0 ? '-' : '+';
  const hh = pad(Math.trunc(Math.abs(offsetMinutes) / 60), 2);
  const mm = pad(Math.abs(offsetMinutes) % 60, 2);
  let offset: string;
  if (offsetMinutes === 0 && style === 'Z') offset = 'Z';
  else if (style === 'compact') offset = `${sign}${hh}${mm}`;
  else offset = `${sign}${hh}:${mm}`;
  return `${date}T${time}${fraction}${offset}`;
}

describe('round trips', () => {
  it('any bigint >= 0 written as a digit string comes back exactly', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 78n - 1n }),
        fc.constantFrom('TOKEN', 'token', 'ToKeN'),
        (n, currency) => {
          const direct = parseDecimalString(n.toString());
          expect(direct.ok && BigInt(direct.value)).toBe(n);
          const money = decimalMoneySchema.parse({ value: n.toString(), currency });
          expect(money).toEqual({ value: n.toString(), currency: 'token' });
          const balance = parseAccountBalance({
            ...fx.accountBalance(),
            balance: { value: n.toString(), currency },
          });
          expect(balance.ok && balance.record.balance.value).toBe(n.toString());
        },
      ),
    );
  });

  it('any Date written as ISO 8601 with any offset and fraction normalizes to the same instant', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('0001-01-02T00:00:00Z'),
          max: new Date('9998-12-30T00:00:00Z'),
          noInvalidDate: true,
        }),
        fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
        fc.integer({ min: 0, max: 9 }),
        fc.stringMatching(/^[0-9]{6}$/),
        fc.constantFrom('Z', 'colon', 'compact'),
        (instant, offset, digits, extra, style) => {
          const text = formatIso(instant, offset, digits, extra, style);
          const result = parseIsoTimestamp(text);
          // Fewer than three fraction digits drop precision: the expected instant is truncated the same way.
          const unit = digits >= 3 ? 1 : digits === 0 ? 1000 : 10 ** (3 - digits);
          const ms = instant.getTime();
          const expected = ms - (((ms % unit) + unit) % unit);
          expect(result.ok && result.value.getTime(), text).toBe(expected);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('any integer epoch seconds convert to that instant', () => {
    fc.assert(
      fc.property(fc.integer({ min: -62_135_596_800, max: 253_402_300_799 }), (seconds) => {
        const result = epochSecondsToDate(seconds);
        expect(result.ok && result.value.getTime()).toBe(seconds * 1000);
        const restaurant = parseListedRestaurant({ ...fx.listedRestaurant(), created_at: seconds });
        expect(restaurant.ok && restaurant.record.createdAt?.getTime()).toBe(seconds * 1000);
      }),
    );
  });
});

// --- (c) content hash -------------------------------------------------------------------------

/** Deep copy with object keys re-inserted in an order given by `seed`. */
function reorderKeys(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((item, i) => reorderKeys(item, seed + i + 1));
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value);
  const shuffled = entries
    .map((entry, i) => ({ entry, rank: Math.imul(i + 1, 2_654_435_761 ^ seed) >>> 0 }))
    .sort((a, b) => a.rank - b.rank)
    .map(({ entry: [k, v] }) => [k, reorderKeys(v, seed * 31 + 7)] as const);
  return Object.fromEntries(shuffled);
}

describe('contentHash', () => {
  it('is insensitive to key order at any depth', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer(), (value, seed) => {
        expect(contentHash(reorderKeys(value, seed))).toBe(contentHash(value));
      }),
    );
  });

  it('explicit key-order example', () => {
    expect(contentHash({ a: 1, b: { c: [1, 2], d: null } })).toBe(
      contentHash({ b: { d: null, c: [1, 2] }, a: 1 }),
    );
    expect(canonicalJson({ b: 1, a: [{ z: 1, y: 2 }] })).toBe('{"a":[{"y":2,"z":1}],"b":1}');
  });

  it('is sensitive to any value change at any depth', () => {
    fc.assert(
      fc.property(
        fc.jsonValue().chain((value) => {
          const all = paths(value);
          return fc.tuple(fc.constant(value), fc.constantFrom(...all), fc.jsonValue());
        }),
        ([value, path, replacement]) => {
          const mutated = mutateAt(value, path, replacement);
          // -0 and 0 (and keys JSON cannot tell apart) serialize identically; skip no-op mutations.
          fc.pre(canonicalJson(mutated) !== canonicalJson(value));
          expect(contentHash(mutated)).not.toBe(contentHash(value));
        },
      ),
    );
  });

  it('distinguishes types JSON distinguishes and exact big integers', () => {
    const hashes = [1, '1', true, null, [1], { v: 1 }, '18446744073709551616', '18446744073709551617'].map(
      contentHash,
    );
    expect(new Set(hashes).size).toBe(hashes.length);
  });

  it('is a hex sha256', () => {
    expect(contentHash({})).toMatch(/^[0-9a-f]{64}$/);
  });
});
