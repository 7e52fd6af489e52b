import { z } from 'zod';

/** Contents larger than this are validated every time: the memo's keys stay small. */
const MAX_KEY_LENGTH = 16 * 1024;

/**
 * A schema that validates a value with `schema` and maps it with `toDomain`, remembering the
 * result for the last `capacity` distinct JSON contents. The venue feed embeds the same few
 * locations (each with its restaurant and neighborhood) in thousands of check-ins, and validating
 * every copy was most of a page's parse time. Sound because the result depends on the content
 * only: equal JSON text, equal result (a failure is not remembered and is reported in full each
 * time). Results are shared between records, so they must never be mutated.
 */
export function memoizedByContent<S extends z.ZodType, T>(
  schema: S,
  toDomain: (wire: z.output<S>, raw: unknown) => T,
  capacity = 1024,
): z.ZodType<T> {
  const memo = new Map<string, T>();
  return z.unknown().transform((raw, ctx): T => {
    const key = contentKey(raw);
    const known = key === undefined ? undefined : memo.get(key);
    if (known !== undefined) return known;
    const result = schema.safeParse(raw);
    if (!result.success) {
      // Paths stay relative to this value; the enclosing object prefixes its own key.
      for (const issue of result.error.issues) ctx.issues.push({ ...issue, input: undefined });
      return z.NEVER;
    }
    const value = toDomain(result.data, raw);
    if (key !== undefined) {
      if (memo.size >= capacity) memo.delete(memo.keys().next().value as string);
      memo.set(key, value);
    }
    return value;
  });
}

function contentKey(raw: unknown): string | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  let text: string | undefined;
  try {
    text = JSON.stringify(raw);
  } catch {
    return undefined; // a cycle or a bigint: not JSON from the wire, validate it every time
  }
  return text !== undefined && text.length <= MAX_KEY_LENGTH ? text : undefined;
}
