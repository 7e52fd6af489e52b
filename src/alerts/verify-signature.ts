import { timingSafeEqual } from 'node:crypto';
import { computeSignature } from './sign-alert.js';

export type SignatureVerdict =
  | { ok: true; timestamp: number }
  | {
      ok: false;
      reason: 'missing-header' | 'malformed-header' | 'timestamp-out-of-tolerance' | 'signature-mismatch';
    };

export interface VerifySignatureInput {
  /** The request body exactly as received (before any JSON parsing). */
  rawBody: string | Buffer;
  /** The `Rewards-Signature` header value. */
  header: string | string[] | undefined;
  secret: string;
  /** Reject signatures older (or newer) than this; replay protection. Default 300. */
  toleranceSeconds?: number;
  /** Default: the current time. */
  now?: Date;
}

/**
 * For webhook receivers: checks `Rewards-Signature: t=<unix seconds>,v1=<hex>` against the raw body.
 * Several `v1` entries are accepted (any one matching is enough), so a sender may sign with an old and
 * a new secret while it is being rotated. Compares in constant time. Never throws.
 */
export function verifyRewardsSignature(input: VerifySignatureInput): SignatureVerdict {
  const header = Array.isArray(input.header) ? input.header[0] : input.header;
  if (header === undefined || header.trim() === '') return { ok: false, reason: 'missing-header' };
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const separator = part.indexOf('=');
    if (separator < 0) continue;
    const key = part.slice(0, separator).trim();
    const value = part.slice(separator + 1).trim();
    if (key === 't' && /^\d+$/.test(value)) timestamp = Number(value);
    if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) signatures.push(value.toLowerCase());
  }
  if (timestamp === undefined || signatures.length === 0) return { ok: false, reason: 'malformed-header' };
  const tolerance = input.toleranceSeconds ?? 300;
  const nowSeconds = Math.floor((input.now ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSeconds - timestamp) > tolerance)
    return { ok: false, reason: 'timestamp-out-of-tolerance' };
  const expected = Buffer.from(computeSignature(input.rawBody, timestamp, input.secret), 'hex');
  const matches = signatures.some((signature) => {
    const given = Buffer.from(signature, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return matches ? { ok: true, timestamp } : { ok: false, reason: 'signature-mismatch' };
}
