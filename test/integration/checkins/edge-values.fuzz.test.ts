import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFeedCheckIn } from '../../../src/records/index.js';
import { writeCheckIns } from '../../../src/warehouse/check-ins.js';
import { storeRejections } from '../../../src/warehouse/rejected-records.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { feedCheckIn } from '../../unit/records/fixtures.js';

// Values at the edges of every column type a feed check-in lands in (uuid, text, integer,
// double precision, boolean, timestamptz, jsonb): each generated record must be stored, or be a
// rejected record; never a write that fails (which would stall its window).

const codeUnits = fc
  .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 8 })
  .map((units) => String.fromCharCode(...units));
const text = fc.oneof(
  fc.string(),
  codeUnits,
  fc.constantFrom('', '\u0000', '\ud800', '😀', 'x'.repeat(10_000)),
);
const int = fc.oneof(
  fc.integer(),
  fc.constantFrom(2 ** 31 - 1, 2 ** 31, -(2 ** 31), -(2 ** 31) - 1, Number.MAX_SAFE_INTEGER, 0, -1, 1.5),
);
const float = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(
    1.7976931348623157e308,
    -1.7976931348623157e308,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    0,
  ),
);
const pad = (n: number, width: number) => String(n).padStart(width, '0');
const timestamp = fc
  .record({
    year: fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom(0, 1, 1970, 9999)),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 28 }),
    second: fc.integer({ min: 0, max: 86_399 }),
    millis: fc.integer({ min: 0, max: 999 }),
    offset: fc.constantFrom('Z', '+14:00', '-12:00', '+05:30'),
  })
  .map(
    ({ year, month, day, second, millis, offset }) =>
      `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(Math.floor(second / 3600), 2)}:` +
      `${pad(Math.floor(second / 60) % 60, 2)}:${pad(second % 60, 2)}.${pad(millis, 3)}${offset}`,
  );
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    text,
    float,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(codeUnits, tie('value'), { maxKeys: 3 }),
  ),
})).value;
const deep = fc.integer({ min: 0, max: 60 }).map((depth) => {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = [value];
  return value;
});

const edgeCheckIn = fc
  .record({
    id: fc.uuid(),
    locationName: text,
    street: text,
    neighborhood: text,
    restaurantName: text,
    price: int,
    latitude: float,
    longitude: float,
    tags: fc.oneof(json, deep),
    createdAt: timestamp,
    endedAt: fc.option(timestamp),
    locationUpdatedAt: timestamp,
  })
  .map((edge) => {
    const record = feedCheckIn();
    const location = record['location'] as Record<string, any>;
    record['id'] = edge.id;
    record['created_at'] = edge.createdAt;
    record['ended_at'] = edge.endedAt;
    location['name'] = edge.locationName;
    location['address'].street = edge.street;
    location['neighborhood'].name = edge.neighborhood;
    location['restaurant'].name = edge.restaurantName;
    location['restaurant'].price = edge.price;
    location['restaurant'].tags = edge.tags;
    location['coordinate'] = { latitude: edge.latitude, longitude: edge.longitude };
    location['updated_at'] = edge.locationUpdatedAt;
    // Through the wire: what JSON can carry (e.g. -0 becomes 0).
    return JSON.parse(JSON.stringify(record)) as Record<string, unknown>;
  });

describe('edge values of every column type: stored or rejected, never a failed write', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase('edge_values');
  });
  afterAll(async () => {
    await t?.drop();
  });

  it('whatever the parser accepts the warehouse stores; whatever it refuses lands in rejected_records', async () => {
    let stored = 0;
    let rejected = 0;
    await fc.assert(
      fc.asyncProperty(edgeCheckIn, async (raw) => {
        const parsed = parseFeedCheckIn(raw);
        const seenAt = new Date();
        if (parsed.ok) {
          await t.db.transaction().execute((trx) => writeCheckIns(trx, [parsed.record], seenAt));
          const row = await t.db
            .selectFrom('rewards.check_ins')
            .select('id')
            .where('id', '=', parsed.record.id)
            .executeTakeFirst();
          expect(row?.id).toBe(parsed.record.id);
          stored++;
        } else {
          await storeRejections(t.db, 'checkins', [parsed.rejection], seenAt);
          const row = await t.db
            .selectFrom('rewards.rejected_records')
            .select(['reason', 'payload'])
            .where('record_id', '=', String(raw['id']))
            .executeTakeFirst();
          expect(row?.reason).toMatch(/: /); // names the field, then the problem
          rejected++;
        }
      }),
      { numRuns: 500 },
    );
    // Both outcomes were exercised.
    expect(stored).toBeGreaterThan(0);
    expect(rejected).toBeGreaterThan(0);
  });
});
