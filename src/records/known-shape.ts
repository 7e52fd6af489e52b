import type { z } from 'zod';
import type { FieldDrift } from './schema-drift.js';

/**
 * What a record parser reads of a record, read off its zod schema once (docs/schema-drift.md): for
 * an object, its keys and what is read inside each; for an array, what is read inside each item.
 * `null` stands for a value read whole (a string, a number, a string map, a loose object, a `jsonb`
 * kept as given): nothing inside it can be unknown. Pure.
 */
export type KnownShape =
  | { readonly kind: 'object'; readonly fields: ReadonlyMap<string, KnownShape | null> }
  | { readonly kind: 'array'; readonly items: KnownShape };

/** Schemas that validate with another schema inside a transform (`memoizedByContent`). */
const readsWith = new WeakMap<object, z.ZodType>();

/** Declares that `wrapper` reads what `inner` reads (a transform that validates with `inner`). */
export function declareReads<W extends z.ZodType>(wrapper: W, inner: z.ZodType): W {
  readsWith.set(wrapper, inner);
  return wrapper;
}

interface ZodDef {
  type: string;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  innerType?: z.ZodType;
  element?: z.ZodType;
  in?: z.ZodType;
}

const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch', 'nonoptional']);

/** The shape `schema` reads; null when it reads its value whole (or is not an object or array of them). */
export function knownShapeOf(schema: z.ZodType): KnownShape | null {
  const inner = readsWith.get(schema);
  if (inner !== undefined) return knownShapeOf(inner);
  const def = (schema as unknown as { _zod: { def: ZodDef } })._zod.def;
  if (WRAPPERS.has(def.type) && def.innerType !== undefined) return knownShapeOf(def.innerType);
  if (def.type === 'pipe' && def.in !== undefined) return knownShapeOf(def.in);
  if (def.type === 'array' && def.element !== undefined) {
    const items = knownShapeOf(def.element);
    return items === null ? null : { kind: 'array', items };
  }
  if (def.type !== 'object' || def.shape === undefined) return null;
  // A loose object (`z.looseObject`) keeps every key it is given: none is unknown.
  const catchall = (def.catchall as unknown as { _zod?: { def: ZodDef } } | undefined)?._zod?.def.type;
  if (catchall !== undefined && catchall !== 'never') return null;
  const fields = new Map<string, KnownShape | null>();
  for (const [key, field] of Object.entries(def.shape)) fields.set(key, knownShapeOf(field));
  return { kind: 'object', fields };
}

/** `target[key] = value` as an own property, even for `__proto__` (a key JSON may carry). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The parts of `raw` that `shape` does not read, or null when there are none (the common case:
 * nothing is allocated). The result mirrors the record: an unknown field sits under its own name
 * with its value as received; unknown fields inside a known object sit under that object's name
 * (`{ location: { foo: 1 } }`); inside an array, under the item's index (`{ benefits: { "2": {
 * icon: "x" } } }`). A key of the result is therefore unknown itself exactly when the parser does
 * not read it; when the parser reads it, it holds only what is unknown inside. Recursion follows
 * the shape, which is finite, never the record.
 */
export function unknownFieldsOf(raw: unknown, shape: KnownShape | null): Record<string, unknown> | null {
  if (shape === null) return null;
  if (shape.kind === 'array') {
    if (!Array.isArray(raw)) return null;
    let out: Record<string, unknown> | null = null;
    for (let index = 0; index < raw.length; index++) {
      const inside = unknownFieldsOf(raw[index], shape.items);
      if (inside === null) continue;
      out ??= {};
      setOwn(out, String(index), inside);
    }
    return out;
  }
  if (!isPlainObject(raw)) return null;
  let out: Record<string, unknown> | null = null;
  for (const key in raw) {
    if (!Object.hasOwn(raw, key)) continue;
    // Values of the map are shapes or null, never undefined: undefined means "not read".
    const field = shape.fields.get(key);
    const kept = field === undefined ? raw[key] : unknownFieldsOf(raw[key], field);
    if (field !== undefined && kept === null) continue;
    out ??= {};
    setOwn(out, key, kept);
  }
  return out;
}

/**
 * `added` drift for each unknown field of `extra` (as `unknownFieldsOf` returned it), named by its
 * path: `mood`, `location.foo`, `benefits[].icon` (an array item's index is left out, so the field
 * is one drift however many items show it). One drift per path.
 */
export function addedDriftOf(extra: Record<string, unknown> | null, shape: KnownShape | null): FieldDrift[] {
  if (extra === null) return [];
  const found = new Map<string, FieldDrift>();
  const walk = (part: Record<string, unknown>, at: KnownShape | null, prefix: string): void => {
    if (at?.kind === 'array') {
      for (const item of Object.values(part)) if (isPlainObject(item)) walk(item, at.items, `${prefix}[]`);
      return;
    }
    for (const key of Object.keys(part)) {
      const path = prefix === '' ? key : `${prefix}.${key}`;
      const field = at?.fields.get(key);
      const value = part[key];
      if (field === undefined || field === null || !isPlainObject(value)) {
        if (!found.has(path)) found.set(path, { fieldPath: path, change: 'added', example: value });
      } else walk(value, field, path);
    }
  };
  walk(extra, shape, '');
  return [...found.values()];
}
