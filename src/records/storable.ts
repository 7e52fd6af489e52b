/**
 * What Postgres refuses however valid the JSON: a string holding U+0000 (text and jsonb both
 * refuse it), a lone UTF-16 surrogate (not valid UTF-8; jsonb refuses its `\ud800` escape), and
 * nesting deep enough to exhaust a recursive reader (Postgres' stack depth, our own hashing).
 * Such a record is rejected by name before it can fail the page it came in.
 */

/** Deeper than any resource of the partner API nests (a restaurant's `tags` is free-form). */
export const MAX_JSON_DEPTH = 32;

// Either a NUL, or a high surrogate not followed by a low one, or a low one not preceded by a high one.
// eslint-disable-next-line no-control-regex
const UNSTORABLE_CHARACTER = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function unstorableCharacter(text: string): string | null {
  const match = UNSTORABLE_CHARACTER.exec(text);
  if (match === null) return null;
  return match[0] === '\u0000'
    ? 'holds U+0000, which Postgres cannot store'
    : 'holds a lone UTF-16 surrogate (not valid Unicode)';
}

/** Any NUL or surrogate: a plain character class, far cheaper than UNSTORABLE_CHARACTER. */
// eslint-disable-next-line no-control-regex
const MAYBE_UNSTORABLE = /[\u0000\ud800-\udfff]/;

/**
 * Whether a JSON value might hold something unstorable: a NUL or any surrogate (paired ones
 * are fine, so this over-reports), or nesting at MAX_JSON_DEPTH. Recursion stops at that depth,
 * so the stack stays small. Builds no paths and allocates nothing: it runs on every record.
 */
function mayBeUnstorable(value: unknown, depth: number, skipKeys?: readonly string[]): boolean {
  if (typeof value === 'string') return MAYBE_UNSTORABLE.test(value);
  if (typeof value !== 'object' || value === null) return false;
  if (depth >= MAX_JSON_DEPTH) return true;
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) if (mayBeUnstorable(item, depth + 1)) return true;
    return false;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key) || skipKeys?.includes(key) === true) continue;
    if (MAYBE_UNSTORABLE.test(key)) return true;
    if (mayBeUnstorable((value as Record<string, unknown>)[key], depth + 1)) return true;
  }
  return false;
}

/** Where a JSON value holds what Postgres would refuse, and what. */
export interface UnstorablePart {
  /** Keys and array indexes from the value's root; empty for the root itself. */
  path: (string | number)[];
  /** `string holds U+0000, …`, `key holds …` or `nested deeper than 32 levels`. */
  problem: string;
}

/**
 * The first part of a JSON value Postgres would refuse, or null when all of it can be stored.
 * `skipKeys`: top-level keys whose values the caller checks itself (a memoized schema does).
 */
export function findUnstorable(value: unknown, skipKeys?: readonly string[]): UnstorablePart | null {
  return mayBeUnstorable(value, 0, skipKeys) ? locateUnstorable(value, skipKeys) : null;
}

/** `findUnstorable` as `path: problem`, the form rejection reasons take. */
export function unstorableReason(value: unknown, skipKeys?: readonly string[]): string | null {
  const found = findUnstorable(value, skipKeys);
  return found === null ? null : `${formatJsonPath(found.path)}: ${found.problem}`;
}

/** `location.tags[0].name`; `(record)` for the root. */
export function formatJsonPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out === '' ? '(record)' : out;
}

interface Visit {
  value: unknown;
  key: string | number | null;
  parent: Visit | null;
  depth: number;
}

/** Iterative: a value nested 10,000 deep costs no stack. Paths are built only for the finding. */
function locateUnstorable(value: unknown, skipKeys?: readonly string[]): UnstorablePart | null {
  const pathOf = (visit: Visit, last?: string): (string | number)[] => {
    const path: (string | number)[] = last === undefined ? [] : [last];
    for (let at: Visit | null = visit; at !== null && at.key !== null; at = at.parent) path.unshift(at.key);
    return path;
  };
  const stack: Visit[] = [{ value, key: null, parent: null, depth: 0 }];
  for (let visit = stack.pop(); visit !== undefined; visit = stack.pop()) {
    const { value: current, depth } = visit;
    if (typeof current === 'string') {
      const problem = unstorableCharacter(current);
      if (problem !== null) return { path: pathOf(visit), problem: `string ${problem}` };
      continue;
    }
    if (typeof current !== 'object' || current === null) continue;
    if (depth >= MAX_JSON_DEPTH) {
      return { path: pathOf(visit), problem: `nested deeper than ${MAX_JSON_DEPTH} levels` };
    }
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) {
        stack.push({ value: current[i] as unknown, key: i, parent: visit, depth: depth + 1 });
      }
      continue;
    }
    const keys = Object.keys(current);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      if (depth === 0 && skipKeys?.includes(key) === true) continue;
      const problem = unstorableCharacter(key);
      if (problem !== null) return { path: pathOf(visit, key), problem: `key ${problem}` };
      stack.push({ value: (current as Record<string, unknown>)[key], key, parent: visit, depth: depth + 1 });
    }
  }
  return null;
}

const REPLACEMENT = '\ufffd';
const UNSTORABLE_CHARACTERS = new RegExp(UNSTORABLE_CHARACTER.source, 'g');

/** The text with every unstorable character replaced by U+FFFD. */
export function storableText(text: string): string {
  return text.replace(UNSTORABLE_CHARACTERS, REPLACEMENT);
}

/** At most this much JSON of a rejected payload is kept (a 200 MB record would not help anyone). */
export const MAX_REJECTED_PAYLOAD_BYTES = 64 * 1024;

/**
 * A copy of a rejected payload that `rejected_records.payload` (jsonb) always accepts: strings
 * cleaned, nesting cut at MAX_JSON_DEPTH, non-JSON values (bigint, cycles, functions) made JSON,
 * and anything larger than MAX_REJECTED_PAYLOAD_BYTES replaced by a marked, truncated preview.
 * Returns the JSON text.
 */
export function storablePayloadJson(payload: unknown): string {
  const json = JSON.stringify(storableCopy(payload, 0, new Set())) ?? 'null';
  if (Buffer.byteLength(json, 'utf8') <= MAX_REJECTED_PAYLOAD_BYTES) return json;
  return JSON.stringify({
    truncated: true,
    bytes: Buffer.byteLength(json, 'utf8'),
    // Cut on a code point boundary, then cleaned again in case the cut split a pair.
    preview: storableText([...json.slice(0, 4096)].join('')),
  });
}

function storableCopy(value: unknown, depth: number, ancestors: Set<object>): unknown {
  switch (typeof value) {
    case 'string':
      return storableText(value);
    case 'number':
      return Number.isFinite(value) ? value : String(value);
    case 'boolean':
      return value;
    case 'bigint':
      return value.toString();
    case 'undefined':
    case 'function':
    case 'symbol':
      return null;
    default:
      break;
  }
  if (value === null) return null;
  if (depth >= MAX_JSON_DEPTH) return `[nested deeper than ${MAX_JSON_DEPTH} levels]`;
  const object = value as object;
  if (ancestors.has(object)) return '[cycle]';
  ancestors.add(object);
  try {
    if (Array.isArray(object)) return object.map((item: unknown) => storableCopy(item, depth + 1, ancestors));
    const out: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(object)) {
      out[storableText(key)] = storableCopy(field, depth + 1, ancestors);
    }
    return out;
  } catch {
    return '[unreadable]';
  } finally {
    ancestors.delete(object);
  }
}
