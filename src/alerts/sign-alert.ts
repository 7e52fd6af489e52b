import { createHmac } from 'node:crypto';

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

/** Headers of one delivery attempt (docs/payment-intents.md, "Delivery"). The signature is fresh on every attempt. */
export function alertRequestHeaders(input: {
  alertId: string;
  rawBody: string;
  now: Date;
  secret: string;
}): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    [EVENT_ID_HEADER]: input.alertId,
    [SIGNATURE_HEADER]: signatureHeader(input.rawBody, input.now, input.secret),
  };
}
