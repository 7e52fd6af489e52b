import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  booleanArrayLiteral,
  dateArrayLiteral,
  integerArrayLiteral,
  uuidArrayLiteral,
} from '../../../src/warehouse/array-literals.js';

const same = <T>(value: T) => value;
const A = '10000000-0000-4000-8000-000000000001';
const B = '20000000-0000-4000-8000-00000000000b';

/** Postgres's reading of a literal of unquoted elements: split on commas, NULL is null. */
function elementsOf(literal: string): (string | null)[] {
  expect(literal.startsWith('{') && literal.endsWith('}')).toBe(true);
  const inner = literal.slice(1, -1);
  return inner === '' ? [] : inner.split(',').map((e) => (e === 'NULL' ? null : e));
}

describe('array literals of a page column', () => {
  it('joins UUIDs, integers, flags and dates as unquoted elements', () => {
    expect(uuidArrayLiteral([A, B], same)).toBe(`{${A},${B}}`);
    expect(uuidArrayLiteral([], same)).toBe('{}');
    expect(integerArrayLiteral([1_764_288_000_000, null, -5, 0], same)).toBe('{1764288000000,NULL,-5,0}');
    expect(booleanArrayLiteral([true, false], same)).toBe('{t,f}');
    expect(dateArrayLiteral(['2026-11-27', '2026-11-28'])).toBe('{2026-11-27,2026-11-28}');
  });

  it('refuses a value that would change the array, naming it', () => {
    // Two ids in one value: as many characters as two elements, one element short.
    expect(() => uuidArrayLiteral([`${A},${B}`], same)).toThrow(TypeError);
    expect(() => uuidArrayLiteral([A, `${A.slice(0, 35)},`], same)).toThrow(/as a uuid/);
    expect(() => uuidArrayLiteral([A, 'NULL'], same)).toThrow('"NULL"');
    expect(() => uuidArrayLiteral([`{${A.slice(1)}`], same)).toThrow(TypeError);
    expect(() => uuidArrayLiteral([`${A.slice(0, 35)}"`], same)).toThrow(TypeError);
    expect(() => integerArrayLiteral([1.5], same)).toThrow('1.5');
    expect(() => integerArrayLiteral([Number.NaN], same)).toThrow(TypeError);
    expect(() => integerArrayLiteral([2 ** 53], same)).toThrow(TypeError);
    expect(() => dateArrayLiteral(['2026-11-27,2026-11-28'])).toThrow(TypeError);
  });

  it('a uuid list it accepts reads back as exactly its values; any value with a comma, brace, quote or wrong length is refused', () => {
    const uuid = fc.uuid();
    const hostile = fc.oneof(
      uuid,
      fc.string({ maxLength: 80 }),
      fc.tuple(uuid, uuid).map(([x, y]) => `${x},${y}`),
      uuid.map((u) => `${u.slice(0, 18)},${u.slice(19)}`),
    );
    fc.assert(
      fc.property(fc.array(hostile, { maxLength: 8 }), (values) => {
        let literal: string | null = null;
        try {
          literal = uuidArrayLiteral(values, same);
        } catch (error) {
          expect(error).toBeInstanceOf(TypeError);
        }
        const allPlain = values.every((v) => /^[0-9a-fA-F-]{36}$/.test(v));
        expect(literal !== null).toBe(allPlain);
        if (literal !== null) expect(elementsOf(literal)).toEqual(values);
      }),
    );
  });

  it('an integer list reads back as its values', () => {
    fc.assert(
      fc.property(fc.array(fc.option(fc.maxSafeInteger(), { nil: null })), (values) => {
        expect(elementsOf(integerArrayLiteral(values, same))).toEqual(
          values.map((v) => (v === null ? null : String(v))),
        );
      }),
    );
  });
});
