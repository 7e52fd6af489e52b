import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { alertPayloadFromIntent, serializeAlertBody } from '../../../src/alerts/alert-body.js';
import { parsePaymentIntent } from '../../../src/records/payment-intent.js';
import {
  afterFailedAttempt,
  DEFAULT_ALERT_DELIVERY_POLICY as D,
  retryDelayMs,
} from '../../../src/alerts/delivery-policy.js';
import { alertRequestHeaders, signatureHeader } from '../../../src/alerts/sign-alert.js';
import { verifyRewardsSignature } from '../../../src/alerts/verify-signature.js';

const secret = 'whsec_test_0123456789';
const now = new Date('2026-11-20T12:00:00Z');

describe('Rewards-Signature', () => {
  it('is t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">', () => {
    const body = '{"id":"x"}';
    const t = Math.floor(now.getTime() / 1000);
    const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
    expect(signatureHeader(body, now, secret)).toBe(`t=${t},v1=${expected}`);
  });

  it('verifies the raw body it signed, and rejects any other body, secret or stale timestamp', () => {
    fc.assert(
      fc.property(fc.string(), fc.string({ minLength: 1 }), (body, other) => {
        const header = signatureHeader(body, now, secret);
        expect(verifyRewardsSignature({ rawBody: body, header, secret, now })).toEqual({
          ok: true,
          timestamp: now.getTime() / 1000,
        });
        if (other !== body) {
          expect(verifyRewardsSignature({ rawBody: other, header, secret, now })).toEqual({
            ok: false,
            reason: 'signature-mismatch',
          });
        }
      }),
    );
    const header = signatureHeader('{}', now, secret);
    expect(verifyRewardsSignature({ rawBody: '{}', header, secret: 'another-secret', now }).ok).toBe(false);
    const later = new Date(now.getTime() + 301_000);
    expect(verifyRewardsSignature({ rawBody: '{}', header, secret, now: later })).toEqual({
      ok: false,
      reason: 'timestamp-out-of-tolerance',
    });
    expect(
      verifyRewardsSignature({ rawBody: '{}', header, secret, now: later, toleranceSeconds: 600 }).ok,
    ).toBe(true);
  });

  it('accepts any of several v1 signatures (secret rotation) and rejects malformed headers', () => {
    const good = signatureHeader('{}', now, secret);
    const rotated = `${good},v1=${'0'.repeat(64)}`;
    expect(verifyRewardsSignature({ rawBody: '{}', header: rotated, secret, now }).ok).toBe(true);
    expect(verifyRewardsSignature({ rawBody: '{}', header: undefined, secret, now })).toEqual({
      ok: false,
      reason: 'missing-header',
    });
    expect(verifyRewardsSignature({ rawBody: '{}', header: 'v1=abc', secret, now })).toEqual({
      ok: false,
      reason: 'malformed-header',
    });
  });

  it('headers carry the content type, our User-Agent, the event id and the signature', () => {
    const headers = alertRequestHeaders({
      alertId: 'a1',
      rawBody: '{}',
      now,
      secret,
      userAgent: 'rewards-etl/9.9.9',
    });
    expect(headers['Content-Type']).toBe('application/json');
    expect(headers['User-Agent']).toBe('rewards-etl/9.9.9');
    expect(headers['Rewards-Event-Id']).toBe('a1');
    expect(headers['Rewards-Signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(JSON.stringify(headers)).not.toContain(secret);
  });
});

describe('alert body', () => {
  it('is { id, type, created_at, data: { payment_intent } } with exactly the contract fields', () => {
    const parsed = parsePaymentIntent({
      id: 'c0a80101-0000-4000-8000-000000000001',
      object: 'payment_intent',
      payer_account_balance_id: 'c0a80101-0000-4000-8000-000000000002',
      payee_account_balance_id: 'c0a80101-0000-4000-8000-000000000003',
      amount: { value: '1000000000000000000', currency: 'SVC' },
      description: 'Order #1',
      status: 'paid',
      expires_at: null,
      canceled_at: null,
      paid_at: now.toISOString(),
      refunded_at: null,
      metadata: { order_id: '1' },
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
    });
    if (!parsed.ok) throw new Error(parsed.rejection.reason);
    const payload = alertPayloadFromIntent(parsed.record);
    const body = JSON.parse(serializeAlertBody({ id: 'a1', createdAt: now, payload })) as Record<
      string,
      unknown
    >;
    expect(Object.keys(body)).toEqual(['id', 'type', 'created_at', 'data']);
    expect(body['type']).toBe('payment_intent.paid');
    expect(body['created_at']).toBe(now.toISOString());
    const intent = (body['data'] as { payment_intent: Record<string, unknown> }).payment_intent;
    expect(Object.keys(intent).sort()).toEqual(
      [
        'amount',
        'description',
        'id',
        'metadata',
        'paid_at',
        'payee_account_balance_id',
        'payer_account_balance_id',
        'status',
      ].sort(),
    );
    expect(intent['amount']).toEqual({ value: '1000000000000000000', currency: 'svc' });
    expect(intent['paid_at']).toBe(now.toISOString());
  });
});

describe('delivery backoff', () => {
  it('doubles from the base delay up to the cap', () => {
    expect(retryDelayMs(1)).toBe(D.baseDelayMs);
    expect(retryDelayMs(2)).toBe(2 * D.baseDelayMs);
    expect(retryDelayMs(4)).toBe(8 * D.baseDelayMs);
    expect(retryDelayMs(100)).toBe(D.maxDelayMs);
  });
  it('gives up after maxAttempts or maxAgeMs', () => {
    expect(afterFailedAttempt({ attempts: D.maxAttempts, createdAt: now, now }).giveUp).toBe(true);
    expect(
      afterFailedAttempt({ attempts: 1, createdAt: new Date(now.getTime() - D.maxAgeMs), now }).giveUp,
    ).toBe(true);
    expect(afterFailedAttempt({ attempts: 1, createdAt: now, now })).toEqual({
      giveUp: false,
      retryInMs: D.baseDelayMs,
    });
  });
  it('with the defaults, 25 attempts wait about 15.4 hours in all, so they end before the 3 days do', () => {
    // docs/payment-intents.md ("Delivery") and the policy's comment quote this figure.
    const waits = Array.from({ length: D.maxAttempts - 1 }, (_, i) => retryDelayMs(i + 1));
    const totalMs = waits.reduce((sum, wait) => sum + wait, 0);
    expect(totalMs).toBe((1 * 3600 + 25 * 60 + 15) * 1000 + 14 * D.maxDelayMs);
    expect((totalMs / 3_600_000).toFixed(1)).toBe('15.4');
    expect(totalMs).toBeLessThan(D.maxAgeMs);
  });
});
