import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_JSON_DEPTH,
  MAX_REJECTED_PAYLOAD_BYTES,
  storablePayloadJson,
  storableText,
  unstorableReason,
} from '../../../src/records/storable.js';
import { parseFeedCheckIn } from '../../../src/records/index.js';
import { parseIsoTimestamp, epochSecondsToDate } from '../../../src/records/primitives.js';
import { feedCheckIn } from './fixtures.js';

/** Any UTF-16 code unit, NUL and lone surrogates included. */
const anyCodeUnits = fc
  .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 12 })
  .map((units) => String.fromCharCode(...units));
const wellFormed = (text: string) =>
  [...text].every((c) => c !== '\u0000' && !(c.length === 1 && c >= '\ud800' && c <= '\udfff'));

describe('what Postgres can store', () => {
  it('a string is storable exactly when it holds no U+0000 and no lone surrogate', () => {
    fc.assert(
      fc.property(anyCodeUnits, (text) => {
        expect(unstorableReason({ name: text }) === null).toBe(wellFormed(text));
      }),
    );
  });

  it('a nested value is storable exactly when every key and string is and it nests less than 32 deep', () => {
    const { tree } = fc.letrec<{ tree: unknown }>((tie) => ({
      tree: fc.oneof(
        { depthSize: 'small' },
        anyCodeUnits,
        fc.integer(),
        fc.constant(null),
        fc.array(tie('tree'), { maxLength: 3 }),
        fc.dictionary(anyCodeUnits, tie('tree'), { maxKeys: 3 }),
      ),
    }));
    const storable = (value: unknown, depth: number): boolean => {
      if (typeof value === 'string') return wellFormed(value);
      if (typeof value !== 'object' || value === null) return true;
      if (depth >= MAX_JSON_DEPTH) return false;
      return Object.entries(value).every(([key, item]) => wellFormed(key) && storable(item, depth + 1));
    };
    fc.assert(
      fc.property(tree, fc.integer({ min: 0, max: MAX_JSON_DEPTH + 2 }), (inner, wraps) => {
        let value: unknown = inner;
        for (let i = 0; i < wraps; i++) value = [value];
        expect(unstorableReason(value) === null).toBe(storable(value, 0));
      }),
      { numRuns: 500 },
    );
  });

  it('names the path of the first unstorable string, key or nesting level', () => {
    expect(unstorableReason({ location: { name: 'a\u0000b' } })).toBe(
      'location.name: string holds U+0000, which Postgres cannot store',
    );
    expect(unstorableReason({ tags: ['ok', '\udc00'] })).toBe(
      'tags[1]: string holds a lone UTF-16 surrogate (not valid Unicode)',
    );
    expect(unstorableReason({ ['k\u0000']: 1 })).toMatch(/^k.: key holds U\+0000/);
    let deep: unknown = 'x';
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(unstorableReason({ tags: deep })).toMatch(/^tags(\[0\])+: nested deeper than 32 levels$/);
    expect(unstorableReason({ ok: '😀 paired surrogates are fine', n: 1e308 })).toBeNull();
  });

  it('a record holding an unstorable value is rejected by the parser, naming the field', () => {
    const record = feedCheckIn();
    (record['location'] as Record<string, unknown>)['name'] = 'Bar\u0000';
    const result = parseFeedCheckIn(record);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.rejection.reason).toMatch(/^location\.name: string holds U\+0000/);
  });

  it('the embedded restaurant price must fit an integer column', () => {
    const record = feedCheckIn();
    ((record['location'] as Record<string, unknown>)['restaurant'] as Record<string, unknown>)['price'] =
      2 ** 31;
    const result = parseFeedCheckIn(record);
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.rejection.reason).toMatch(/location\.restaurant\.price: above the 32-bit integer range/);
  });

  it('timestamps in year 0000 are refused (Postgres has no year 0); year 0001 and 9999 are kept', () => {
    expect(parseIsoTimestamp('0000-06-01T00:00:00Z')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/year 0000/),
    });
    expect(parseIsoTimestamp('0001-01-01T00:00:00Z').ok).toBe(true);
    expect(parseIsoTimestamp('9999-12-31T23:59:59Z').ok).toBe(true);
    expect(epochSecondsToDate(-62_135_596_801).ok).toBe(false);
    expect(epochSecondsToDate(-62_135_596_800).ok).toBe(true);
  });

  it('a rejected payload always becomes storable JSON within the size cap', () => {
    const anyJsonish = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        anyCodeUnits,
        fc.double(),
        fc.bigInt(),
        fc.boolean(),
        fc.constant(null),
        fc.constant(undefined),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(anyCodeUnits, tie('value'), { maxKeys: 4 }),
      ),
    })).value;
    fc.assert(
      fc.property(anyJsonish, (value) => {
        const json = storablePayloadJson(value);
        expect(() => JSON.parse(json) as unknown).not.toThrow();
        expect(unstorableReason(JSON.parse(json))).toBeNull();
        expect(Buffer.byteLength(json)).toBeLessThanOrEqual(MAX_REJECTED_PAYLOAD_BYTES);
      }),
    );
  });

  it('a huge or deep payload is cut, and says so', () => {
    const huge = storablePayloadJson({ blob: 'x'.repeat(10 * MAX_REJECTED_PAYLOAD_BYTES) });
    expect(JSON.parse(huge)).toMatchObject({ truncated: true, bytes: expect.any(Number) as number });
    let deep: unknown = 'x';
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(storablePayloadJson(deep)).toContain(`[nested deeper than ${MAX_JSON_DEPTH} levels]`);
    const cycle: Record<string, unknown> = {};
    cycle['self'] = cycle;
    expect(JSON.parse(storablePayloadJson(cycle))).toEqual({ self: '[cycle]' });
    expect(storableText('a\u0000b\ud800')).toBe('a\ufffdb\ufffd');
  });
});
