import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { contentMemo, memoizedByContent, sameJson } from '../../../src/records/content-memo.js';
import { parseFeedCheckIn } from '../../../src/records/index.js';
import { feedCheckIn, fullLocation } from './fixtures.js';

describe('embedded locations are validated once per content', () => {
  it('check-ins with equal location content share one parsed location; other content never does', () => {
    const first = parseFeedCheckIn(feedCheckIn());
    const copy = parseFeedCheckIn({ ...feedCheckIn(), location: structuredClone(fullLocation()) });
    const renamed = parseFeedCheckIn({
      ...feedCheckIn(),
      location: { ...fullLocation(), name: 'Elsewhere' },
    });
    if (!first.ok || !copy.ok || !renamed.ok) throw new Error('fixtures must parse');
    expect(copy.record.location).toBe(first.record.location);
    expect(renamed.record.location).not.toBe(first.record.location);
    expect(renamed.record.location.name).toBe('Elsewhere');
    expect(first.record.location.name).not.toBe('Elsewhere');
  });

  it('a bad location is rejected every time it comes, with its path under location', () => {
    const bad = { ...feedCheckIn(), location: { ...fullLocation(), created_at: 'yesterday' } };
    for (let i = 0; i < 2; i++) {
      const result = parseFeedCheckIn(structuredClone(bad));
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.rejection.reason).toMatch(/^location\.created_at: not an ISO 8601/);
    }
  });

  it('gives what the plain schema gives, for any sequence of contents and ids, past its capacity too', () => {
    const schema = z.object({ id: z.string(), n: z.int().min(0), tag: z.string() });
    const toDomain = (wire: z.output<typeof schema>) => ({ ...wire, twice: wire.n * 2 });
    const memo = memoizedByContent(schema, toDomain, 4);
    const value = fc.oneof(
      fc.record({
        id: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'),
        n: fc.integer({ min: -2, max: 6 }),
        tag: fc.constantFrom('x', 'y'),
      }),
      fc.constantFrom(null, 'text', { n: 1 }, { id: 'a', n: 1 }, { tag: 'x', n: 2, id: 'b' }),
    );
    fc.assert(
      fc.property(fc.array(value, { maxLength: 40 }), (values) => {
        for (const input of values) {
          const plain = schema.safeParse(input);
          const memoized = memo.safeParse(input);
          expect(memoized.success).toBe(plain.success);
          if (plain.success && memoized.success) expect(memoized.data).toEqual(toDomain(plain.data));
          if (!plain.success && !memoized.success) {
            expect(memoized.error.issues.map((i) => [i.path, i.message])).toEqual(
              plain.error.issues.map((i) => [i.path, i.message]),
            );
          }
        }
      }),
    );
  });
});

describe('contentMemo.remembered (the hot path that skips zod)', () => {
  it('knows only what the schema accepted, and only for the same content', () => {
    const schema = z.object({ id: z.string(), n: z.int() });
    const memo = contentMemo(schema, (wire) => ({ ...wire }));
    const value = { id: 'a', n: 1 };
    expect(memo.remembered(value)).toBeUndefined();
    const parsed = memo.schema.parse(value);
    expect(memo.remembered({ n: 1, id: 'a' })).toBe(parsed);
    expect(memo.remembered({ id: 'a', n: 2 })).toBeUndefined();
    expect(memo.schema.safeParse({ id: 'b', n: 'x' }).success).toBe(false);
    expect(memo.remembered({ id: 'b', n: 'x' })).toBeUndefined();
  });
});

describe('sameJson', () => {
  it('reads an own "__proto__" key as data, never as the prototype', () => {
    const withKey = JSON.parse('{"__proto__": {}}') as unknown;
    expect(sameJson(withKey, {})).toBe(false);
    expect(sameJson({}, withKey)).toBe(false);
    expect(sameJson(withKey, JSON.parse('{"__proto__": {}}'))).toBe(true);
    expect(sameJson(JSON.parse('{"__proto__": {"a": 1}}'), JSON.parse('{"__proto__": {"a": 2}}'))).toBe(
      false,
    );
  });

  it('is JSON equality: key order does not matter, anything else does', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        const reordered = JSON.parse(JSON.stringify(a), (_key, value: unknown) =>
          typeof value === 'object' && value !== null && !Array.isArray(value)
            ? Object.fromEntries(Object.entries(value).reverse())
            : value,
        ) as unknown;
        expect(sameJson(a, reordered)).toBe(true);
        const canonical = (v: unknown) =>
          JSON.stringify(v, (_k, x: unknown) =>
            typeof x === 'object' && x !== null && !Array.isArray(x)
              ? Object.fromEntries(Object.entries(x).sort(([k1], [k2]) => (k1 < k2 ? -1 : k1 > k2 ? 1 : 0)))
              : x,
          );
        expect(sameJson(a, b)).toBe(canonical(a) === canonical(b));
      }),
    );
  });
});
