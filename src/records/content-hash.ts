import { createHash } from 'node:crypto';

/**
 * Canonical JSON: what `JSON.stringify` would write, with object keys sorted (by UTF-16 code
 * units) at every depth. So two values that differ only in key order serialize identically.
 * Follows JSON.stringify for the rest: `toJSON` is honoured (Dates become ISO strings), undefined
 * and functions are dropped from objects and become null in arrays, non-finite numbers become
 * null. Bigints are written as plain integer literals (exact). Throws a TypeError on a cycle.
 */
export function canonicalJson(value: unknown): string {
  return write(value, new Set());
}

function write(value: unknown, ancestors: Set<object>): string {
  if (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { toJSON?: unknown }).toJSON === 'function'
  ) {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'bigint':
      return value.toString();
    case 'undefined':
    case 'function':
    case 'symbol':
      return 'null';
    default:
      break;
  }
  if (value === null) return 'null';
  const object = value as object;
  if (ancestors.has(object)) throw new TypeError('canonicalJson: value contains a cycle');
  ancestors.add(object);
  try {
    if (Array.isArray(object)) {
      const items: string[] = [];
      for (let i = 0; i < object.length; i++) items.push(write((object as unknown[])[i], ancestors));
      return `[${items.join(',')}]`;
    }
    const entries: string[] = [];
    for (const key of Object.keys(object).sort()) {
      const field = (object as Record<string, unknown>)[key];
      if (field === undefined || typeof field === 'function' || typeof field === 'symbol') continue;
      entries.push(`${JSON.stringify(key)}:${write(field, ancestors)}`);
    }
    return `{${entries.join(',')}}`;
  } finally {
    ancestors.delete(object);
  }
}

/**
 * Stable content hash (hex sha256 of `canonicalJson(value)`), used to decide whether a snapshot
 * differs from the current history version. Insensitive to key order only; any value change
 * changes it.
 */
export function contentHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex');
}
