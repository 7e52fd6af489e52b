import { createHmac } from 'node:crypto';

/** MEMBER_PII: how the member fields that are personal data land in the warehouse. */
export type MemberPiiMode = 'store' | 'hash' | 'omit';

/** The member fields that are personal data; MEMBER_PII decides how each lands in the warehouse. */
export const PII_FIELDS = ['email', 'phone_number', 'birthdate', 'zipcode'] as const;
export type PiiField = (typeof PII_FIELDS)[number];

export type PiiValues = Record<PiiField, string | null>;

/**
 * One PII value as the warehouse keeps it. `hash` is an HMAC-SHA256 keyed with the token
 * encryption key, not a bare hash: an email or a birthdate is guessable, and a bare hash of a
 * guessable value is no protection. Equal values still give equal hashes, so joins and counts of
 * distinct members work. Pure.
 */
export function protectPii(value: string | null, mode: MemberPiiMode, key: Buffer): string | null {
  if (value === null || mode === 'omit') return null;
  if (mode === 'store') return value;
  return createHmac('sha256', key).update(value, 'utf8').digest('hex');
}

/** The four fields, and the record as received with the same four fields replaced. Pure. */
export function applyPiiPolicy(
  values: PiiValues,
  raw: unknown,
  mode: MemberPiiMode,
  key: Buffer,
): { values: PiiValues; raw: unknown } {
  const protectedValues = Object.fromEntries(
    PII_FIELDS.map((field) => [field, protectPii(values[field], mode, key)]),
  ) as PiiValues;
  if (mode === 'store' || typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { values: protectedValues, raw };
  }
  const copy: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
  for (const field of PII_FIELDS) if (field in copy) copy[field] = protectedValues[field];
  return { values: protectedValues, raw: copy };
}

/**
 * A rejected member record as `rejected_records.payload` may keep it: the four PII fields at its
 * top level follow MEMBER_PII exactly as in `members` (the same keyed HMAC, so a hash in a
 * rejection matches the member's row), whatever type they arrived as. A value that is not a string
 * (the API sent `zipcode: 10014`) is hashed as its JSON text. `omit` leaves them null. Anything
 * not an object is returned as is. Pure.
 */
export function protectRejectedPayload(payload: unknown, mode: MemberPiiMode, key: Buffer): unknown {
  if (mode === 'store' || typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    return payload;
  }
  const copy: Record<string, unknown> = { ...(payload as Record<string, unknown>) };
  for (const field of PII_FIELDS) {
    if (!(field in copy)) continue;
    const value = copy[field];
    if (value === null || value === undefined) continue;
    // JSON text of a JSON value (a number, an object): never undefined for what JSON.parse gave.
    const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
    copy[field] = protectPii(text, mode, key);
  }
  return copy;
}
