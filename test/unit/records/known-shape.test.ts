import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  addedDriftOf,
  knownShapeOf,
  unknownFieldsOf,
  type KnownShape,
} from '../../../src/records/known-shape.js';
import {
  driftOf,
  openHoursDrift,
  parseAccountBalance,
  parseChallenge,
  parseFeedCheckIn,
  parseListedRestaurant,
  parseMembership,
  parseMemberStatus,
  parseOpenHours,
  parsePaymentIntent,
  parseReducedLocation,
  parseShortFormCheckIn,
  parseUserTag,
  type RecordParser,
} from '../../../src/records/index.js';
import * as fx from './fixtures.js';

// Nested unknown fields (docs/schema-drift.md): a field the parser does not know inside an object
// it reads is kept (extra mirrors the record) and reported by its dotted path.

type Json = Record<string, unknown>;
const at = (record: Json, key: string) => record[key] as Json;

describe('known shape: what a parser reads, nested objects included', () => {
  it('reads object keys through optional, nullable, transforms and arrays; loose objects, records and unknowns whole', () => {
    const shape = knownShapeOf(
      z.object({
        a: z.string().transform((s) => s.length),
        b: z.object({ c: z.number() }).nullable().optional(),
        items: z.array(z.object({ d: z.boolean() })),
        tags: z.array(z.unknown()),
        loose: z.looseObject({ e: z.string() }),
        map: z.record(z.string(), z.string()),
      }),
    );
    expect(shape?.kind).toBe('object');
    const fields = shape?.kind === 'object' ? shape.fields : new Map<string, KnownShape | null>();
    expect([...fields.keys()]).toEqual(['a', 'b', 'items', 'tags', 'loose', 'map']);
    expect(fields.get('a')).toBeNull();
    expect(fields.get('b')).toEqual({ kind: 'object', fields: new Map([['c', null]]) });
    expect(fields.get('items')).toEqual({
      kind: 'array',
      items: { kind: 'object', fields: new Map([['d', null]]) },
    });
    expect(fields.get('tags')).toBeNull();
    expect(fields.get('loose')).toBeNull();
    expect(fields.get('map')).toBeNull();
  });
});

const nestedCases: Array<[string, RecordParser<unknown>, () => Json, (raw: Json) => void, string, Json]> = [
  [
    'feed check-in: inside the embedded location',
    parseFeedCheckIn,
    fx.feedCheckIn,
    (raw) => (at(raw, 'location')['foo'] = 1),
    'location.foo',
    { location: { foo: 1 } },
  ],
  [
    "feed check-in: inside the location's restaurant",
    parseFeedCheckIn,
    fx.feedCheckIn,
    (raw) => (at(at(raw, 'location'), 'restaurant')['michelin_stars'] = 1),
    'location.restaurant.michelin_stars',
    { location: { restaurant: { michelin_stars: 1 } } },
  ],
  [
    "member check-in: inside the short location's neighborhood",
    parseShortFormCheckIn,
    fx.shortFormCheckIn,
    (raw) => (at(at(raw, 'location'), 'neighborhood')['borough'] = 'x'),
    'location.neighborhood.borough',
    { location: { neighborhood: { borough: 'x' } } },
  ],
  [
    'location (GET /locations/{id}): inside the address',
    parseReducedLocation,
    fx.reducedLocation,
    (raw) => (at(raw, 'address')['unit'] = '4B'),
    'address.unit',
    { address: { unit: '4B' } },
  ],
  [
    'member status: inside an item of benefits',
    parseMemberStatus,
    fx.memberStatus,
    (raw) => ((raw['benefits'] as Json[])[0]!['icon'] = 'cake'),
    'benefits[].icon',
    { benefits: { '0': { icon: 'cake' } } },
  ],
  [
    'member status: inside progress',
    parseMemberStatus,
    fx.memberStatus,
    (raw) => (at(raw, 'progress')['visits_left'] = 6),
    'progress.visits_left',
    { progress: { visits_left: 6 } },
  ],
  [
    'member tag: inside an item of metadata',
    parseUserTag,
    fx.userTag,
    (raw) => ((raw['metadata'] as Json[])[0]!['label'] = 'Restaurants'),
    'metadata[].label',
    { metadata: { '0': { label: 'Restaurants' } } },
  ],
  [
    'membership: inside the membership tier',
    parseMembership,
    fx.membership,
    (raw) => (at(raw, 'membership_tier')['rank'] = 2),
    'membership_tier.rank',
    { membership_tier: { rank: 2 } },
  ],
  [
    'account balance: inside the balance amount',
    parseAccountBalance,
    fx.accountBalance,
    (raw) => (at(raw, 'balance')['decimals'] = 18),
    'balance.decimals',
    { balance: { decimals: 18 } },
  ],
];

describe('nested unknown fields: kept and reported by path', () => {
  it.each(nestedCases)('%s', (_rule, parse, make, addField, path, extra) => {
    const raw = make();
    addField(raw);
    const result = parse(raw);
    expect(result.ok).toBe(true);
    expect(result.ok && result.extra).toEqual(extra);
    expect(driftOf(result)).toEqual([
      { fieldPath: path, change: 'added', example: Object.values(flatten(extra))[0] },
    ]);
  });

  it.each([
    ['a payment intent’s metadata (a string map)', parsePaymentIntent, fx.fullPaymentIntent, 'metadata'],
    ['a restaurant’s asset (a loose object)', parseListedRestaurant, fx.listedRestaurant, 'asset'],
    ['a challenge’s threshold (a loose object)', parseChallenge, fx.challenge, 'threshold'],
  ])('inside %s every key is read: no drift', (_rule, parse, make, key) => {
    const raw = make();
    const inner = raw[key];
    if (typeof inner === 'object' && inner !== null) (inner as Json)['brand_new'] = 'x';
    const result = parse(raw);
    expect(result.ok).toBe(true);
    expect(driftOf(result)).toEqual([]);
  });

  it('the same unknown field in several items of an array is one drift of the record', () => {
    const raw = fx.memberStatus();
    raw['benefits'] = [
      { title: 'a', description: 'b', icon: 1 },
      { title: 'c', description: 'd', icon: 2 },
    ];
    const result = parseMemberStatus(raw);
    expect(result.ok && result.extra).toEqual({ benefits: { '0': { icon: 1 }, '1': { icon: 2 } } });
    expect(driftOf(result)).toEqual([{ fieldPath: 'benefits[].icon', change: 'added', example: 1 }]);
  });
});

describe('open hours: stored whole, drift against the expected shape', () => {
  const hours = () => ({
    object: 'open_hours',
    location: fx.IDS.location,
    time_zone: 'America/Los_Angeles',
    open_hours: [{ day_of_week: 1, opens_at: '11:00', closes_at: '22:00' }],
  });

  it('the expected shape shows no drift', () => {
    expect(openHoursDrift(hours())).toEqual([]);
  });

  it('an added field (top level or in a period), a missing one and a retyped one are drift; the body is kept whole', () => {
    const raw: Json = { ...hours(), holidays: [] };
    delete raw['time_zone'];
    raw['location'] = 7;
    (raw['open_hours'] as Json[])[0]!['note'] = 'kitchen closes early';
    const result = parseOpenHours(raw);
    expect(result.ok && result.record.hours).toBe(raw);
    const byPath = driftOf(result).sort((a, b) => a.fieldPath.localeCompare(b.fieldPath));
    expect(byPath).toEqual([
      { fieldPath: 'holidays', change: 'added', example: [] },
      { fieldPath: 'location', change: 'type_changed', example: 7 },
      { fieldPath: 'open_hours[].note', change: 'added', example: 'kitchen closes early' },
      { fieldPath: 'time_zone', change: 'missing', example: null },
    ]);
  });

  it('a body of another type is one type_changed drift; a scalar is rejected as before', () => {
    expect(driftOf(parseOpenHours([]))).toEqual([
      { fieldPath: '(record)', change: 'type_changed', example: [] },
    ]);
    const scalar = parseOpenHours('closed');
    expect(scalar.ok).toBe(false);
    expect(driftOf(scalar)).toEqual([{ fieldPath: '(record)', change: 'type_changed', example: 'closed' }]);
  });
});

// --- invariants over arbitrary shapes and arbitrary JSON -------------------------------------

/** The leaves of an extra (as unknownFieldsOf shapes it) by their path, for the examples above. */
function flatten(extra: Json, prefix = ''): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(extra)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length > 0)
      Object.assign(out, flatten(value as Json, path));
    else out[path] = value;
  }
  return out;
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** What the parser reads of `raw` (a reference implementation, the complement of extra). */
function knownPart(raw: unknown, shape: KnownShape | null): unknown {
  if (shape === null) return raw;
  if (shape.kind === 'array')
    return Array.isArray(raw) ? raw.map((item) => knownPart(item, shape.items)) : raw;
  if (!isObject(raw)) return raw;
  const out: Json = {};
  for (const key of Object.keys(raw)) {
    if (!shape.fields.has(key)) continue;
    Object.defineProperty(out, key, {
      value: knownPart(raw[key], shape.fields.get(key) ?? null),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** `known` with `extra` put back where it came from. */
function withExtra(known: unknown, extra: Json | null, shape: KnownShape | null): unknown {
  if (extra === null || shape === null) return known;
  if (shape.kind === 'array') {
    const items = [...(known as unknown[])];
    for (const [index, part] of Object.entries(extra))
      items[Number(index)] = withExtra(items[Number(index)], part as Json, shape.items);
    return items;
  }
  const out: Json = { ...(known as Json) };
  for (const key of Object.keys(extra)) {
    const field = shape.fields.get(key);
    const value = field === undefined ? extra[key] : withExtra(out[key], extra[key] as Json, field);
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

const keyArb = fc.constantFrom('a', 'b', 'c', 'id', 'location', '__proto__', 'x.y');
const shapeArb: fc.Arbitrary<KnownShape> = fc.letrec<{ shape: KnownShape; field: KnownShape | null }>(
  (tie) => ({
    shape: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc
        .uniqueArray(fc.tuple(keyArb, tie('field')), { selector: ([key]) => key, maxLength: 4 })
        .map((entries) => ({ kind: 'object' as const, fields: new Map(entries) })),
      tie('shape').map((items) => ({ kind: 'array' as const, items })),
    ),
    field: fc.oneof({ depthSize: 'small' }, fc.constant(null), tie('shape')),
  }),
).shape;
const jsonArb = fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.parse(JSON.stringify(value)) as unknown);
/** JSON built with the keys the shapes use, so records and shapes overlap. */
const recordArb: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    jsonArb,
    fc
      .array(fc.tuple(keyArb, tie('value')), { maxLength: 5 })
      .map((entries) => JSON.parse(JSON.stringify(Object.fromEntries(entries))) as unknown),
    fc.array(tie('value'), { maxLength: 3 }),
  ),
})).value;

describe('known shape: invariants', () => {
  it('what the parser reads and extra together are the whole record: no field lost, none invented', () => {
    fc.assert(
      fc.property(shapeArb, recordArb, (shape, raw) => {
        const extra = unknownFieldsOf(raw, shape);
        expect(withExtra(knownPart(raw, shape), extra, shape)).toEqual(raw);
      }),
      { numRuns: 500 },
    );
  });

  it('extra is null exactly when the parser reads every field of the record', () => {
    fc.assert(
      fc.property(shapeArb, recordArb, (shape, raw) => {
        const extra = unknownFieldsOf(raw, shape);
        expect(extra === null).toBe(JSON.stringify(knownPart(raw, shape)) === JSON.stringify(raw));
      }),
      { numRuns: 500 },
    );
  });

  it('every unknown field is reported once, as added, by its path', () => {
    fc.assert(
      fc.property(shapeArb, recordArb, (shape, raw) => {
        const extra = unknownFieldsOf(raw, shape);
        const drift = addedDriftOf(extra, shape);
        const paths = drift.map((d) => d.fieldPath);
        expect(new Set(paths).size).toBe(paths.length);
        expect(drift.every((d) => d.change === 'added')).toBe(true);
        expect(drift.length === 0).toBe(extra === null);
      }),
      { numRuns: 500 },
    );
  });

  it('the JSON text of extra keeps every unknown field (as jsonb stores it)', () => {
    fc.assert(
      fc.property(shapeArb, recordArb, (shape, raw) => {
        const extra = unknownFieldsOf(raw, shape);
        const stored = extra === null ? null : (JSON.parse(JSON.stringify(extra)) as Json);
        expect(withExtra(knownPart(raw, shape), stored, shape)).toEqual(raw);
      }),
      { numRuns: 300 },
    );
  });
});
