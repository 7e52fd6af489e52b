import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  alertRequestHeaders,
  standardWebhooksKey,
  standardWebhooksSignature,
} from '../../../src/alerts/sign-alert.js';
import { loadConfig } from '../../../src/config/config.js';
import { secretValues } from '../../../src/config/secret-values.js';
import { ConfigError } from '../../../src/config/config-error.js';

// ALERT_SIGNATURE_SCHEME=standard-webhooks (https://www.standardwebhooks.com): the headers
// webhook-id, webhook-timestamp and webhook-signature, checked here against the reference library.

const KEY = randomBytes(32);
const SECRET = `whsec_${KEY.toString('base64')}`;
const now = new Date('2026-11-22T12:00:00Z');

describe('ALERT_SIGNATURE_SCHEME=standard-webhooks', () => {
  it('signs "<id>.<timestamp>.<body>" as v1,<base64 HMAC-SHA256> keyed with the decoded secret, as the library does', () => {
    fc.assert(
      fc.property(
        fc.uuid(),
        fc.string(),
        fc.integer({ min: 1_000_000_000, max: 4_000_000_000 }),
        (id, body, t) => {
          const ours = standardWebhooksSignature({ id, timestampSeconds: t, rawBody: body, key: KEY });
          expect(ours).toBe(new Webhook(SECRET).sign(id, new Date(t * 1000), body));
        },
      ),
    );
  });

  it('sends webhook-id (the event id, as Rewards-Event-Id), webhook-timestamp and webhook-signature; no Rewards-Signature', () => {
    const headers = alertRequestHeaders({
      alertId: 'evt-1',
      rawBody: '{"id":"evt-1"}',
      now,
      secret: SECRET,
      scheme: 'standard-webhooks',
      userAgent: 'rewards-etl/1.2.3',
    });
    expect(headers).toEqual({
      'Content-Type': 'application/json',
      'User-Agent': 'rewards-etl/1.2.3',
      'Rewards-Event-Id': 'evt-1',
      'webhook-id': 'evt-1',
      'webhook-timestamp': String(now.getTime() / 1000),
      'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/]+=*$/) as unknown,
    });
    expect(JSON.stringify(headers)).not.toContain(KEY.toString('base64'));
  });

  it('the default scheme stays rewards: Rewards-Signature, no webhook-* headers', () => {
    expect(loadConfig({}).alerts.signatureScheme).toBe('rewards');
    const headers = alertRequestHeaders({ alertId: 'a', rawBody: '{}', now, secret: SECRET, userAgent: 'x' });
    expect(Object.keys(headers).sort()).toEqual([
      'Content-Type',
      'Rewards-Event-Id',
      'Rewards-Signature',
      'User-Agent',
    ]);
  });

  it.each([
    ['no whsec_ prefix', KEY.toString('base64'), /must start with whsec_/],
    ['not base64', 'whsec_not base64!', /followed by base64/],
    [
      'base64 missing its padding',
      `whsec_${randomBytes(25).toString('base64').replace(/=+$/, '')}`,
      /followed by base64/,
    ],
    ['a key too short', `whsec_${randomBytes(8).toString('base64')}`, /24 to 64 bytes/],
    ['a key too long', `whsec_${randomBytes(65).toString('base64')}`, /24 to 64 bytes/],
  ])(
    'refuses a secret with %s at start-up, naming ALERT_WEBHOOK_SECRET (exit 2)',
    (_rule, secret, message) => {
      const attempt = () =>
        loadConfig({ ALERT_SIGNATURE_SCHEME: 'standard-webhooks', ALERT_WEBHOOK_SECRET: secret });
      expect(attempt).toThrow(ConfigError);
      expect(attempt).toThrow(/^ALERT_WEBHOOK_SECRET: /);
      expect(attempt).toThrow(message);
      expect(standardWebhooksKey(secret).ok).toBe(false);
    },
  );

  it('refuses an unknown scheme, naming ALERT_SIGNATURE_SCHEME', () => {
    const attempt = () => loadConfig({ ALERT_SIGNATURE_SCHEME: 'svix' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/^ALERT_SIGNATURE_SCHEME: must be one of rewards, standard-webhooks/);
  });

  it('any secret works with the rewards scheme, as before', () => {
    expect(loadConfig({ ALERT_WEBHOOK_SECRET: 'plain secret' }).alerts.webhookSecret?.reveal()).toBe(
      'plain secret',
    );
  });

  it('the key part of a whsec_ secret is scrubbed from logs too', () => {
    const config = loadConfig({ ALERT_SIGNATURE_SCHEME: 'standard-webhooks', ALERT_WEBHOOK_SECRET: SECRET });
    expect(secretValues(config)).toEqual(expect.arrayContaining([SECRET, KEY.toString('base64')]));
  });
});
