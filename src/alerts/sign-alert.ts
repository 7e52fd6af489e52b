import { createHmac } from 'node:crypto';

// How an alert is signed (docs/payment-intents.md, "Delivery" and "Verifying a delivery"). Two
// schemes, chosen by ALERT_SIGNATURE_SCHEME: `rewards` (the default; byte for byte Stripe's, so
// Stripe's SDKs verify it) and `standard-webhooks` (https://www.standardwebhooks.com). Pure.

export const SIGNATURE_HEADER = 'Rewards-Signature';
export const EVENT_ID_HEADER = 'Rewards-Event-Id';

export const ALERT_SIGNATURE_SCHEMES = ['rewards', 'standard-webhooks'] as const;
export type AlertSignatureScheme = (typeof ALERT_SIGNATURE_SCHEMES)[number];

/** Hex HMAC-SHA256 of `"<t>.<raw body>"`: the `v1` of the signature header. */
export function computeSignature(rawBody: string | Buffer, timestampSeconds: number, secret: string): string {
  return createHmac('sha256', secret).update(`${timestampSeconds}.`).update(rawBody).digest('hex');
}

/** `Rewards-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`. */
export function signatureHeader(rawBody: string | Buffer, now: Date, secret: string): string {
  const t = Math.floor(now.getTime() / 1000);
  return `t=${t},v1=${computeSignature(rawBody, t, secret)}`;
}

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

/** `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">`, keyed with the decoded secret. */
export function standardWebhooksSignature(input: {
  id: string;
  timestampSeconds: number;
  rawBody: string | Buffer;
  key: Buffer;
}): string {
  const mac = createHmac('sha256', input.key)
    .update(`${input.id}.${input.timestampSeconds}.`)
    .update(input.rawBody);
  return `v1,${mac.digest('base64')}`;
}

/** The signature headers of one scheme: `Rewards-Signature`, or the three Standard Webhooks headers. */
function signatureHeaders(input: AlertRequestInput): Record<string, string> {
  if (input.scheme !== 'standard-webhooks')
    return { [SIGNATURE_HEADER]: signatureHeader(input.rawBody, input.now, input.secret) };
  const parsed = standardWebhooksKey(input.secret);
  // Config refuses such a secret at start-up (exit 2 naming ALERT_WEBHOOK_SECRET); never reached.
  if (!parsed.ok) throw new Error(`ALERT_WEBHOOK_SECRET: ${parsed.reason}`);
  const timestampSeconds = Math.floor(input.now.getTime() / 1000);
  return {
    'webhook-id': input.alertId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': standardWebhooksSignature({
      id: input.alertId,
      timestampSeconds,
      rawBody: input.rawBody,
      key: parsed.key,
    }),
  };
}

export interface AlertRequestInput {
  alertId: string;
  rawBody: string;
  now: Date;
  secret: string;
  /** ALERT_SIGNATURE_SCHEME; `rewards` when not given. */
  scheme?: AlertSignatureScheme;
  /** Who is calling: `rewards-etl/<version>`, or SVC_USER_AGENT (one identity for every request we send). */
  userAgent: string;
}

/**
 * Headers of one delivery attempt (docs/payment-intents.md, "Delivery"). The signature is fresh on
 * every attempt; `Rewards-Event-Id` (= the body's `id`, = `webhook-id`) stays, whatever the scheme.
 */
export function alertRequestHeaders(input: AlertRequestInput): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': input.userAgent,
    [EVENT_ID_HEADER]: input.alertId,
    ...signatureHeaders(input),
  };
}
