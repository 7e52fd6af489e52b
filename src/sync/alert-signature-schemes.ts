// The names of the alert signature schemes (ALERT_SIGNATURE_SCHEMES, docs/payment-intents.md,
// "Delivery") and the form of a Standard Webhooks secret: what the config needs to parse
// ALERT_SIGNATURE_SCHEME and ALERT_WEBHOOK_SECRET, below it; the signing is src/alerts/sign-alert.ts. Pure.

export const ALERT_SIGNATURE_SCHEMES = ['rewards', 'standard-webhooks'] as const;
export type AlertSignatureScheme = (typeof ALERT_SIGNATURE_SCHEMES)[number];

/** A Standard Webhooks secret: this prefix, then the key in base64. */
export const STANDARD_WEBHOOKS_SECRET_PREFIX = 'whsec_';
/** The spec asks for keys of 24 to 64 random bytes. */
const KEY_BYTES = { min: 24, max: 64 } as const;

/**
 * The HMAC key of a Standard Webhooks secret (`whsec_<base64>`), or why the secret is not one.
 * Only canonical base64 is taken: a secret mangled in a copy (a lost `=`, a space) is refused
 * rather than silently giving a different key than the receiver's library derives.
 */
export function standardWebhooksKey(
  secret: string,
): { ok: true; key: Buffer } | { ok: false; reason: string } {
  if (!secret.startsWith(STANDARD_WEBHOOKS_SECRET_PREFIX))
    return {
      ok: false,
      reason: `must start with ${STANDARD_WEBHOOKS_SECRET_PREFIX} (the Standard Webhooks form)`,
    };
  const encoded = secret.slice(STANDARD_WEBHOOKS_SECRET_PREFIX.length);
  const key = Buffer.from(encoded, 'base64');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || key.toString('base64') !== encoded)
    return {
      ok: false,
      reason: `must be ${STANDARD_WEBHOOKS_SECRET_PREFIX} followed by base64 (e.g. whsec_$(openssl rand -base64 32))`,
    };
  if (key.length < KEY_BYTES.min || key.length > KEY_BYTES.max)
    return {
      ok: false,
      reason: `must hold ${KEY_BYTES.min} to ${KEY_BYTES.max} bytes after ${STANDARD_WEBHOOKS_SECRET_PREFIX}, not ${key.length}`,
    };
  return { ok: true, key };
}
