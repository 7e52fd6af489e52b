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
  const memo = new Map<string, { raw: unknown; value: T }>();
  // Reads what `schema` reads: schema drift looks inside it (src/records/known-shape.ts).
  const memoized = z.unknown().transform((raw, ctx): T => {
    const id = idOf(raw);
    const known = id === undefined ? undefined : memo.get(id);
    if (known !== undefined && sameJson(known.raw, raw)) return known.value;
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
    if (id !== undefined) {
      memo.delete(id);
      if (memo.size >= capacity) memo.delete(memo.keys().next().value as string);
      memo.set(id, { raw, value });
    }
    return value;
  });
  return declareReads(memoized, schema);
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
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(b, key)) return false;
    if (!sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}
