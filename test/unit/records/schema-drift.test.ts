import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  parseAccountBalance,
  parseChallenge,
  parseFeedCheckIn,
  parseListedRestaurant,
  parseMembership,
  parseMemberStatus,
  parsePaymentIntent,
  parsePaymentIntentListItem,
  parseRecords,
  parseReducedLocation,
  parseShortFormCheckIn,
  parseUser,
  parseUserTag,
  parseUserWallet,
  driftOf,
  type RecordParser,
} from '../../../src/records/index.js';
import {
  driftFromIssues,
  DriftTally,
  driftSubject,
  exampleJson,
  MAX_DRIFT_EXAMPLE_BYTES,
  mergeDriftCounts,
  type DriftCount,
} from '../../../src/records/schema-drift.js';
import { unknownFieldsOf, type KnownShape } from '../../../src/records/known-shape.js';
import { formatJsonPath } from '../../../src/records/storable.js';
import * as fx from './fixtures.js';

const parsers: Array<[string, RecordParser<unknown>, () => Record<string, unknown>, string]> = [
  ['feed check-in', parseFeedCheckIn, fx.feedCheckIn, 'created_at'],
  ['payment intent (full form)', parsePaymentIntent, fx.fullPaymentIntent, 'paid_at'],
  ['payment intent (list form)', parsePaymentIntentListItem, fx.listPaymentIntent, 'updated_at'],
  ['listed restaurant (snapshot)', parseListedRestaurant, fx.listedRestaurant, 'name'],
  ['challenge (snapshot)', parseChallenge, fx.challenge, 'end_time'],
  ['account balance', parseAccountBalance, fx.accountBalance, 'balance'],
  ['member profile', parseUser, fx.user, 'email'],
  ['member wallet', parseUserWallet, fx.userWallet, 'address'],
  ['member tag', parseUserTag, fx.userTag, 'type'],
  ['member check-in (short form)', parseShortFormCheckIn, fx.shortFormCheckIn, 'created_at'],
  ['member status (snapshot)', parseMemberStatus, fx.memberStatus, 'tier'],
  ['membership (snapshot)', parseMembership, fx.membership, 'restaurant_id'],
  ['location, GET /locations/{id} (snapshot)', parseReducedLocation, fx.reducedLocation, 'time_zone'],
];

describe('schema drift: what each record parser reports', () => {
  it.each(parsers)('%s: a record with only known fields shows no drift and no extra', (_n, parse, make) => {
    const result = parse(make());
    expect(result.ok).toBe(true);
    expect(result.ok && result.extra).toBeNull();
    expect(driftOf(result)).toEqual([]);
  });

  it.each(parsers)('%s: an added field is kept in extra and reported as added', (_n, parse, make) => {
    const result = parse({ ...make(), loyalty_tier_v2: { level: 3 } });
    expect(result.ok).toBe(true);
    expect(result.ok && result.extra).toEqual({ loyalty_tier_v2: { level: 3 } });
    expect(driftOf(result)).toEqual([
      { fieldPath: 'loyalty_tier_v2', change: 'added', example: { level: 3 } },
    ]);
  });

  it.each(parsers)(
    '%s: a dropped required field is a rejection and missing drift',
    (_n, parse, make, field) => {
      const raw = make();
      delete raw[field];
      const result = parse(raw);
      expect(result.ok).toBe(false);
      expect(driftOf(result)).toContainEqual({ fieldPath: field, change: 'missing', example: null });
    },
  );

  it.each(parsers)(
    '%s: a field of another type is a rejection and type_changed drift',
    (_n, parse, make, field) => {
      const result = parse({ ...make(), [field]: 12345 });
      expect(result.ok).toBe(false);
      expect(driftOf(result)).toEqual([{ fieldPath: field, change: 'type_changed', example: 12345 }]);
    },
  );

  it('a bad value of the right type (a malformed timestamp) is a rejection, not drift', () => {
    const result = parseFeedCheckIn({ ...fx.feedCheckIn(), created_at: 'yesterday' });
    expect(result.ok).toBe(false);
    expect(driftOf(result)).toEqual([]);
  });

  it('a nested field that goes missing is named by its path', () => {
    const checkIn = fx.feedCheckIn();
    const location = { ...(checkIn['location'] as Record<string, unknown>) };
    delete location['id'];
    const result = parseFeedCheckIn({ ...checkIn, location });
    expect(driftOf(result)).toContainEqual({ fieldPath: 'location.id', change: 'missing', example: null });
  });

  it('a page sums drift per (field, change): 3 records with the same new field give one entry of count 3', () => {
    const page = [1, 2, 3].map((n) => ({
      ...fx.feedCheckIn(),
      id: fx.IDS.checkIn.replace(/.$/, String(n)),
      mood: n,
    }));
    const missing = fx.feedCheckIn();
    delete missing['ended_at'];
    const parsed = parseRecords([...page, missing], parseFeedCheckIn);
    expect(parsed.records).toHaveLength(3);
    expect(parsed.rejections).toHaveLength(1);
    expect(parsed.drift).toEqual([
      { fieldPath: 'mood', change: 'added', example: 1, count: 3 },
      { fieldPath: 'ended_at', change: 'missing', example: null, count: 1 },
    ]);
  });

  it('a page without drift reports an empty list', () => {
    expect(parseRecords([fx.feedCheckIn(), fx.feedCheckIn()], parseFeedCheckIn).drift).toEqual([]);
  });
});

const jsonObject = fc.dictionary(
  fc.string({ maxLength: 8 }),
  fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)),
);

/** A shape that reads exactly `keys` at the top level, each whole. */
const flat = (keys: readonly string[]): KnownShape => ({
  kind: 'object',
  fields: new Map(keys.map((key) => [key, null])),
});
const unknownFields = (raw: unknown, known: ReadonlySet<string>) => unknownFieldsOf(raw, flat([...known]));

describe('schema drift: invariants', () => {
  it('known fields and extra fields partition the record: nothing lost, nothing counted twice', () => {
    fc.assert(
      fc.property(jsonObject, fc.array(fc.string({ maxLength: 8 })), (raw, knownList) => {
        const known = new Set(knownList);
        const extra = unknownFields(raw, known) ?? {};
        for (const key of Object.keys(raw)) {
          if (known.has(key)) expect(Object.hasOwn(extra, key)).toBe(false);
          else expect(extra[key]).toBe(raw[key]);
        }
        for (const key of Object.keys(extra)) expect(Object.hasOwn(raw, key)).toBe(true);
      }),
    );
  });

  it('extra is null exactly when every field is known', () => {
    fc.assert(
      fc.property(jsonObject, fc.array(fc.string({ maxLength: 8 })), (raw, knownList) => {
        const known = new Set(knownList);
        const allKnown = Object.keys(raw).every((key) => known.has(key));
        expect(unknownFields(raw, known) === null).toBe(allKnown);
      }),
    );
  });

  const count = fc.record({
    fieldPath: fc.constantFrom('a', 'b', 'c.d'),
    change: fc.constantFrom('added' as const, 'missing' as const, 'type_changed' as const),
    example: fc.integer(),
    count: fc.integer({ min: 1, max: 1000 }),
  });
  const total = (list: readonly DriftCount[]) => list.reduce((sum, one) => sum + one.count, 0);

  it('tallying keeps every count and holds one entry per (field, change), in any order of pages', () => {
    fc.assert(
      fc.property(fc.array(count), fc.array(count), (a, b) => {
        const ab = mergeDriftCounts(a, b);
        const ba = mergeDriftCounts(b, a);
        expect(total(ab)).toBe(total(a) + total(b));
        const keys = ab.map((one) => `${one.change}/${one.fieldPath}`);
        expect(new Set(keys).size).toBe(keys.length);
        const byKey = (list: DriftCount[]) =>
          Object.fromEntries(list.map((one) => [`${one.change}/${one.fieldPath}`, one.count]));
        expect(byKey(ab)).toEqual(byKey(ba));
      }),
    );
  });

  it('a tally of single observations counts each once', () => {
    const tally = new DriftTally();
    tally.add([{ fieldPath: 'x', change: 'added', example: 1 }]);
    tally.add([{ fieldPath: 'x', change: 'added', example: 2 }]);
    tally.add([{ fieldPath: 'x', change: 'missing', example: null }]);
    expect(tally.counts()).toEqual([
      { fieldPath: 'x', change: 'added', example: 1, count: 2 },
      { fieldPath: 'x', change: 'missing', example: null, count: 1 },
    ]);
  });
});

describe('schema drift: issues, subjects and examples', () => {
  it.each([
    ['wrong type at a present path', [{ code: 'invalid_type', path: ['a'] }], { a: 1 }, 'type_changed'],
    ['wrong type at an absent path', [{ code: 'invalid_type', path: ['a'] }], {}, 'missing'],
    ['an enum value at an absent path', [{ code: 'invalid_value', path: ['a'] }], {}, 'missing'],
  ])('%s', (_rule, issues, payload, change) => {
    expect(driftFromIssues(issues, payload, formatJsonPath).map((d) => d.change)).toEqual([change]);
  });

  it('a bad value at a present path (not a type) is no drift', () => {
    expect(driftFromIssues([{ code: 'custom', path: ['a'] }], { a: 'x' }, formatJsonPath)).toEqual([]);
  });

  it('the subject names resource, field and change', () => {
    expect(driftSubject({ resource: 'check_ins', fieldPath: 'mood', change: 'added' })).toBe(
      'check_ins:mood:added',
    );
  });

  it('an example is JSON, cut to a marked preview when long, and protected when asked', () => {
    expect(exampleJson({ a: 1 })).toBe('{"a":1}');
    const long = exampleJson('x'.repeat(5000));
    expect(Buffer.byteLength(long)).toBeLessThan(MAX_DRIFT_EXAMPLE_BYTES);
    expect(long).toContain('bytes)');
    expect(exampleJson('me@example.com', () => 'hashed')).toBe('"hashed"');
    expect(exampleJson('me@example.com', () => null)).toBe('null');
    // A missing field's example (null) is no value: it is never protected into a hash.
    expect(exampleJson(null, () => 'hashed')).toBe('null');
  });
});
