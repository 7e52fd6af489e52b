import { z } from 'zod';
import { declareReads } from './known-shape.js';
import { findUnstorable } from './storable.js';

/**
 * A schema for an embedded object with an `id` (a check-in's location): checks that the value
 * can be stored (`findUnstorable`), validates it with `schema` and maps it with `toDomain`,
 * and remembers the result per id for the last `capacity` ids. The venue feed embeds the same
 * few locations (each with its restaurant and neighborhood) in thousands of check-ins;
 * checking and validating every copy was most of a page's parse time. A value equal in content
 * to the one remembered for its id (same keys and values, any key order) gets the remembered
 * result: the result depends on the content only. Any other value is checked in full and
 * replaces the entry; a failure is reported every time and never remembered. Results are
 * shared between records, so they must never be mutated.
 */
export function memoizedByContent<S extends z.ZodType, T>(
  schema: S,
  toDomain: (wire: z.output<S>, raw: unknown) => T,
  capacity = 1024,
): z.ZodType<T> {
  return contentMemo(schema, toDomain, capacity).schema;
}

/**
 * memoizedByContent's schema, and `remembered`: the remembered result for a value equal in content
 * to the one remembered for its id, or undefined (then the schema decides). A caller on a hot path
 * (the feed's known shape, src/records/check-in.ts) asks it first and skips zod's call for the
 * values it has already seen.
 */
export function contentMemo<S extends z.ZodType, T>(
  schema: S,
  toDomain: (wire: z.output<S>, raw: unknown) => T,
  capacity = 1024,
): { schema: z.ZodType<T>; remembered: (raw: unknown) => T | undefined } {
  const memo = new Map<string, { raw: unknown; value: T }>();
  const remembered = (raw: unknown): T | undefined => {
    const id = idOf(raw);
    const known = id === undefined ? undefined : memo.get(id);
    return known !== undefined && sameJson(known.raw, raw) ? known.value : undefined;
  };
  // Reads what `schema` reads: schema drift looks inside it (src/records/known-shape.ts).
  const memoized = z.unknown().transform((raw, ctx): T => {
    const known = remembered(raw);
    if (known !== undefined) return known;
    const unstorable = findUnstorable(raw);
    if (unstorable !== null) {
      ctx.issues.push({
        code: 'custom',
        path: unstorable.path,
        message: unstorable.problem,
        input: undefined,
      });
      return z.NEVER;
    }
    const result = schema.safeParse(raw);
    if (!result.success) {
      // Paths stay relative to this value; the enclosing object prefixes its own key.
      for (const issue of result.error.issues) ctx.issues.push({ ...issue, input: undefined });
      return z.NEVER;
    }
    const value = toDomain(result.data, raw);
    const id = idOf(raw);
    if (id !== undefined) {
      memo.delete(id);
      if (memo.size >= capacity) memo.delete(memo.keys().next().value as string);
      memo.set(id, { raw, value });
    }
    return value;
  });
  return { schema: declareReads(memoized, schema), remembered };
}

function idOf(raw: unknown): string | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const id = (raw as Record<string, unknown>)['id'];
  return typeof id === 'string' ? id : undefined;
}

/**
 * Equal JSON values, object keys in any order (-0 equals 0, as in JSON text and content hashes).
 * Recursion ends where either value does: a remembered value is at most MAX_JSON_DEPTH deep.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  // for-in over objects of one shape uses V8's enum cache; Object.keys allocated two arrays per
  // object (issue 39: this compare ran on every embedded location, 0.8 s of a 200,000-row backfill).
  // No hasOwn per key (a quarter of the compare): a JSON value is never undefined, so a key x has
  // that y lacks shows as undefined in y, and the key counts catch the rest. An own "__proto__"
  // key (JSON.parse makes one) is read as data where it is own; where only one side has it, the
  // counts differ. An enumerable key inherited by both (a polluted prototype) can only make two
  // equal values unequal, never the reverse: the caller then validates in full.
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let keys = 0;
  for (const key in x) {
    const xv = x[key];
    const yv = y[key];
    if (xv !== yv && (yv === undefined || !sameJson(xv, yv))) return false;
    keys++;
  }
  for (const _ in y) keys--;
  return keys === 0;
}
