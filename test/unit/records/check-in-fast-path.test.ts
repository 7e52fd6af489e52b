import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseFeedCheckIn, parseFeedCheckInGeneral } from '../../../src/records/check-in.js';
import { feedCheckIn, fullLocation } from './fixtures.js';

// parseFeedCheckIn checks the feed's known shape by hand and leaves everything else to the general
// parser (zod, schema drift, storability): whatever the record, both give the same result.

type Variant = (record: Record<string, unknown>) => void;

const VARIANTS: Record<string, Variant> = {
  'as documented': () => undefined,
  'upper-case id': (r) => (r.id = String(r.id).toUpperCase()),
  'ended visit with an offset': (r) => (r.ended_at = '2024-05-01T20:00:00-07:00'),
  'an unknown top-level field': (r) => (r.mood = 'happy'),
  'an unknown field inside the location': (r) =>
    (r.location = { ...(r.location as Record<string, unknown>), floor: 3 }),
  'a missing field': (r) => delete r.svc_pay_enabled,
  'a timestamp without an offset': (r) => (r.created_at = '2024-05-01T18:30:00'),
  'year 0000': (r) => (r.created_at = '0000-05-01T18:30:00Z'),
  'a month 13': (r) => (r.ended_at = '2024-13-01T18:30:00Z'),
  'not a UUID': (r) => (r.id = 'c0ffee00'),
  'another object type': (r) => (r.object = 'visit'),
  'a string flag': (r) => (r.svc_pay_enabled = 'true'),
  'a U+0000 in the location': (r) =>
    (r.location = { ...(r.location as Record<string, unknown>), slug: 'a\u0000b' }),
  'a location of the wrong type': (r) => (r.location = 'somewhere'),
  'a numeric ended_at': (r) => (r.ended_at = 1_700_000_000),
  'a __proto__ key': (r) => Object.defineProperty(r, '__proto__', { value: 1, enumerable: true }),
};

describe('the feed check-in fast path', () => {
  for (const [name, change] of Object.entries(VARIANTS)) {
    it(`gives the general parser's result: ${name}`, () => {
      const record = feedCheckIn();
      change(record);
      expect(parseFeedCheckIn(record)).toEqual(parseFeedCheckInGeneral(record));
    });
  }

  it('gives the general parser result for arbitrary values of each field', () => {
    const value = fc.oneof(
      fc.constant(null),
      fc.boolean(),
      fc.string(),
      fc.uuid(),
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      fc.integer(),
      fc.constant(fullLocation()),
    );
    fc.assert(
      fc.property(fc.constantFrom(...Object.keys(feedCheckIn()), 'extra'), value, (field, v) => {
        const record = feedCheckIn();
        record[field] = v;
        expect(parseFeedCheckIn(record)).toEqual(parseFeedCheckInGeneral(record));
      }),
      { numRuns: 300 },
    );
  });

  it('accepts a record of the known shape with no extra fields', () => {
    const result = parseFeedCheckIn(feedCheckIn());
    expect(result).toMatchObject({ ok: true, extra: null });
  });
});
