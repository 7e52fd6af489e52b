import { ConfigError } from './config-error.js';
import type { Env } from './env-schema.js';
import type { Config } from './config.js';
import { Secret } from '../secret.js';
import { standardWebhooksKey } from '../sync/alert-signature-schemes.js';

// Checks of single settings and of settings against each other, run by loadConfig before mapping.

// URL.hostname brackets IPv6 ('[::1]'); a socket address does not ('::1').
const LOOPBACK_HOSTS = new Set(['localhost', '[::1]', '::1']);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/**
 * Credentials cross these URLs (API key, client secret, tokens): plain http: only to this machine,
 * or when the operator opts in for a private network (SVC_ALLOW_PLAIN_HTTP, e.g. docker compose
 * talking to the simulator by service name).
 */
export function requireHttps(variable: string, text: string | undefined, allowPlainHttp: boolean): void {
  if (text === undefined || allowPlainHttp) return;
  const parsed = new URL(text);
  if (parsed.protocol === 'http:' && !isLoopbackHost(parsed.hostname)) {
    throw new ConfigError(
      variable,
      'must use https: (plain http: only for a loopback host, or with SVC_ALLOW_PLAIN_HTTP=true)',
    );
  }
}

/**
 * ALERT_WEBHOOK_URL's `user:password@` is sent as `Authorization: Basic` (fetch refuses a URL with
 * credentials, and a URL is printed in errors and by `doctor`): the URL is kept without it. The
 * password then crosses the network on every alert, so plain http: only to this machine or with
 * SVC_ALLOW_PLAIN_HTTP, as for the partner API's credentials.
 */
export function splitWebhookUrl(
  text: string | undefined,
  allowPlainHttp: boolean,
): Pick<Config['alerts'], 'webhookUrl' | 'webhookAuthorization' | 'webhookPassword'> {
  if (text === undefined)
    return { webhookUrl: undefined, webhookAuthorization: undefined, webhookPassword: undefined };
  const url = new URL(text);
  if (url.username === '' && url.password === '')
    return { webhookUrl: text, webhookAuthorization: undefined, webhookPassword: undefined };
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && !allowPlainHttp) {
    throw new ConfigError(
      'ALERT_WEBHOOK_URL',
      'user:password in the URL is sent as Basic auth, so it needs https: (plain http: only for a loopback host, or with SVC_ALLOW_PLAIN_HTTP=true)',
    );
  }
  const decode = (part: string) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  };
  const credentials = `${decode(url.username)}:${decode(url.password)}`;
  const password = url.password;
  url.username = '';
  url.password = '';
  return {
    webhookUrl: url.toString(),
    webhookAuthorization: new Secret(`Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`),
    webhookPassword: password === '' ? undefined : new Secret(password),
  };
}

/** With Standard Webhooks the secret is `whsec_<base64 key>`: refused at start-up when it is not. */
export function checkedWebhookSecret(env: Env): Secret | undefined {
  const secret = env.ALERT_WEBHOOK_SECRET;
  if (secret === undefined || env.ALERT_SIGNATURE_SCHEME !== 'standard-webhooks') return secret;
  const parsed = standardWebhooksKey(secret.reveal());
  if (!parsed.ok)
    throw new ConfigError(
      'ALERT_WEBHOOK_SECRET',
      `with ALERT_SIGNATURE_SCHEME=standard-webhooks it ${parsed.reason}`,
    );
  return secret;
}

/** Retention must spare the look-back (still re-checked) and the rollup must outlive the rows it sums. */
export function checkRetention(env: Env): void {
  const raw = env.CHECKINS_RETENTION;
  if (raw !== undefined && raw <= env.CHECKINS_LOOKBACK + env.CHECKINS_HISTORY_WINDOW) {
    throw new ConfigError(
      'CHECKINS_RETENTION',
      'must be longer than CHECKINS_LOOKBACK plus CHECKINS_HISTORY_WINDOW',
    );
  }
  const rollup = env.CHECKINS_ROLLUP_RETENTION;
  if (rollup !== undefined && raw !== undefined && rollup < raw) {
    throw new ConfigError(
      'CHECKINS_ROLLUP_RETENTION',
      'must be at least CHECKINS_RETENTION (the rollup outlives the rows)',
    );
  }
  if (rollup !== undefined && raw === undefined) {
    throw new ConfigError(
      'CHECKINS_ROLLUP_RETENTION',
      'needs CHECKINS_RETENTION (the rollup outlives the rows)',
    );
  }
}
