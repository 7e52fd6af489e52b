import { createHmac } from 'node:crypto';
import { standardWebhooksKey, type AlertSignatureScheme } from '../sync/alert-signature-schemes.js';

// The scheme names and the Standard Webhooks secret's form live below the config that reads them.
export {
  ALERT_SIGNATURE_SCHEMES,
  STANDARD_WEBHOOKS_SECRET_PREFIX,
  standardWebhooksKey,
  type AlertSignatureScheme,
} from '../sync/alert-signature-schemes.js';

// How an alert is signed (docs/payment-intents.md, "Delivery" and "Verifying a delivery"). Two
// schemes, chosen by ALERT_SIGNATURE_SCHEME: `rewards` (the default; byte for byte Stripe's, so
// Stripe's SDKs verify it) and `standard-webhooks` (https://www.standardwebhooks.com). Pure.

export const SIGNATURE_HEADER = 'Rewards-Signature';
export const EVENT_ID_HEADER = 'Rewards-Event-Id';

/** Hex HMAC-SHA256 of `"<t>.<raw body>"`: the `v1` of the signature header. */
export function computeSignature(rawBody: string | Buffer, timestampSeconds: number, secret: string): string {
  return createHmac('sha256', secret).update(`${timestampSeconds}.`).update(rawBody).digest('hex');
}

/** `Rewards-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`. */
export function signatureHeader(rawBody: string | Buffer, now: Date, secret: string): string {
  const t = Math.floor(now.getTime() / 1000);
  return `t=${t},v1=${computeSignature(rawBody, t, secret)}`;
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
