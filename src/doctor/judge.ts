import {
  AuthenticationError,
  InsufficientScopeError,
  NetworkError,
  OAuthNotAuthorizedError,
  RateLimitedError,
  RefreshTokenRevokedError,
  RequestBlockedError,
  RequestTimeoutError,
  RouteNotFoundError,
  ServerError,
} from '../api/errors.js';
import type { OAuthStatus } from '../status/status-report.js';
import type { CheckId, CheckResult } from './doctor-report.js';

// Pure verdicts: each turns what a probe saw into one check line. The probes (probes.ts) do the I/O.

export type Probe<T> = { ok: true; value: T } | { ok: false; error: unknown };

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));
const ok = (check: CheckId, detail: string): CheckResult => ({ check, status: 'ok', detail });
const warn = (check: CheckId, detail: string, fix?: string): CheckResult => ({
  check,
  status: 'warn',
  detail,
  ...(fix === undefined ? {} : { fix }),
});
const fail = (check: CheckId, detail: string, fix?: string): CheckResult => ({
  check,
  status: 'fail',
  detail,
  ...(fix === undefined ? {} : { fix }),
});
export const skip = (check: CheckId, detail: string): CheckResult => ({ check, status: 'skip', detail });

/** The oldest major version the project is tested on (its tests run on 15, docker-compose brings 16). */
export const POSTGRES_TESTED_MAJOR = 14;
const MISSING_DATABASE = '3D000';

export function judgePostgres(probe: Probe<{ versionNum: number }>, database: string): CheckResult {
  if (!probe.ok) {
    if ((probe.error as { code?: unknown }).code === MISSING_DATABASE)
      return fail('postgres', `database "${database}" does not exist`, 'run `rewards-etl migrate`');
    return fail(
      'postgres',
      `unreachable: ${message(probe.error)}`,
      'check DATABASE_URL and that Postgres runs',
    );
  }
  const major = Math.floor(probe.value.versionNum / 10_000);
  const minor = probe.value.versionNum % 10_000;
  const version = `PostgreSQL ${major}.${minor}`;
  if (major < POSTGRES_TESTED_MAJOR)
    return warn(
      'postgres',
      `reachable, ${version}: older than the versions this project is tested on (${POSTGRES_TESTED_MAJOR}+)`,
      'upgrade Postgres',
    );
  return ok('postgres', `reachable, ${version}, database "${database}"`);
}

export function judgeMigrations(probe: Probe<{ applied: number; pending: string[] }> | null): CheckResult {
  if (probe === null) return skip('migrations', 'not checked: see the postgres line');
  if (!probe.ok) return fail('migrations', `could not read: ${message(probe.error)}`);
  const { applied, pending } = probe.value;
  if (pending.length === 0) return ok('migrations', `all ${applied} applied`);
  const names = pending.length > 3 ? `${pending.slice(0, 3).join(', ')}, …` : pending.join(', ');
  return fail(
    'migrations',
    `${pending.length} pending of ${applied + pending.length} (${names})`,
    'run `rewards-etl migrate`',
  );
}

/** `INFO` text (`key:value` lines, `#` section headers) as a map. */
export function parseRedisInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    if (line === '' || line.startsWith('#')) continue;
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return fields;
}

/** BullMQ refuses Redis below 5.0.0 and recommends 6.2.0 or newer. */
export const REDIS_MINIMUM = [5, 0, 0] as const;
export const REDIS_RECOMMENDED = [6, 2, 0] as const;

function versionBelow(version: string, floor: readonly number[]): boolean {
  const parts = version.split('.').map((part) => Number.parseInt(part, 10) || 0);
  for (let i = 0; i < floor.length; i++) {
    const have = parts[i] ?? 0;
    const need = floor[i] ?? 0;
    if (have !== need) return have < need;
  }
  return false;
}

export function judgeRedis(probe: Probe<{ info: string }>): CheckResult {
  if (!probe.ok)
    return fail('redis', `unreachable: ${message(probe.error)}`, 'check REDIS_URL and that Redis runs');
  const version = parseRedisInfo(probe.value.info).get('redis_version');
  if (version === undefined) return warn('redis', 'reachable, version unknown (no redis_version in INFO)');
  if (versionBelow(version, REDIS_MINIMUM))
    return fail(
      'redis',
      `reachable, Redis ${version}: BullMQ needs ${REDIS_MINIMUM.join('.')} or newer`,
      'upgrade Redis',
    );
  if (versionBelow(version, REDIS_RECOMMENDED))
    return warn(
      'redis',
      `reachable, Redis ${version}: BullMQ recommends ${REDIS_RECOMMENDED.join('.')} or newer`,
    );
  return ok('redis', `reachable, Redis ${version}`);
}

/**
 * BullMQ keeps jobs, schedulers and locks as ordinary keys: under any eviction policy a full Redis
 * silently deletes some of them (lost schedules come back within 30 s, but a job or its lock
 * evicted mid-run is gone). Only `noeviction` makes a full Redis fail loudly instead.
 */
export function judgeEvictionPolicy(probe: Probe<{ info: string }>): CheckResult {
  if (!probe.ok) return skip('redis eviction', 'not checked: Redis unreachable');
  const policy = parseRedisInfo(probe.value.info).get('maxmemory_policy');
  if (policy === undefined)
    return warn(
      'redis eviction',
      'maxmemory-policy unknown (no maxmemory_policy in INFO)',
      'make sure it is noeviction',
    );
  if (policy === 'noeviction') return ok('redis eviction', 'maxmemory-policy noeviction');
  return warn(
    'redis eviction',
    `maxmemory-policy ${policy}: when Redis is full it evicts keys, and BullMQ's jobs, locks and schedules are keys (queued work silently lost)`,
    'set maxmemory-policy noeviction (BullMQ requires it), or give this Redis its own instance',
  );
}

export interface ApiAnswer {
  status: number;
  json: unknown;
}

/** The discovery probe (`GET /restaurants?page_size=1`): any valid key, no scope, the configured User-Agent. */
export function judgeApi(probe: Probe<ApiAnswer>, baseUrl: string, userAgent: string): CheckResult {
  if (probe.ok)
    return ok('api', `reachable at ${baseUrl}, User-Agent "${userAgent}" accepted, API key valid`);
  const error = probe.error;
  if (error instanceof AuthenticationError)
    return fail(
      'api',
      `reachable, but the API key was refused${error.code ? ` (${error.code})` : ''}`,
      'check SVC_API_KEY',
    );
  if (error instanceof RequestBlockedError)
    return fail(
      'api',
      `blocked: 403 HTML page for User-Agent "${userAgent}"`,
      'set SVC_USER_AGENT to a non-empty product name',
    );
  if (error instanceof RouteNotFoundError)
    return fail(
      'api',
      `${baseUrl}/restaurants is not a route of the API (routing 404)`,
      'SVC_API_BASE_URL must be the API root ending in /v1',
    );
  if (error instanceof RateLimitedError)
    return warn(
      'api',
      'reachable, but rate limited (429) right now',
      'run doctor again; lower SVC_RATE_LIMIT_RPS if it persists',
    );
  if (error instanceof ServerError)
    return fail(
      'api',
      `reachable, but answered ${error.status ?? '5xx'}`,
      'the partner API is having trouble; try again later',
    );
  if (error instanceof NetworkError || error instanceof RequestTimeoutError)
    return fail('api', `unreachable: ${error.message}`, 'check SVC_API_BASE_URL and the network path to it');
  return fail('api', `unexpected answer: ${message(error)}`);
}

/** Which stream each API-key scope serves, for the line that says what breaks without it. */
export const SCOPE_STREAMS = {
  'read:checkins': 'checkins',
  'read:restaurant_challenges': 'challenges',
  'read:balance': 'balance',
} as const;
export type ApiKeyScope = keyof typeof SCOPE_STREAMS;

export function judgeScope(scope: ApiKeyScope, probe: Probe<ApiAnswer> | null): CheckResult {
  const check: CheckId = `scope ${scope}`;
  if (probe === null) return skip(check, 'not checked: the API check failed');
  if (probe.ok) return ok(check, 'granted');
  const error = probe.error;
  if (error instanceof InsufficientScopeError)
    return fail(
      check,
      `missing: the ${SCOPE_STREAMS[scope]} stream cannot run`,
      `ask the partner for a key minted with ${Object.keys(SCOPE_STREAMS).join(', ')}`,
    );
  if (error instanceof RateLimitedError)
    return warn(check, 'not known: rate limited (429)', 'run doctor again');
  return fail(check, `probe failed: ${message(error)}`);
}

export interface OAuthFindings {
  configured: boolean;
  /** null when Postgres could not be read. */
  stored: OAuthStatus | null;
  /** `GET /payment_intents?page_size=1` with the bearer; null when not attempted. */
  probe: Probe<ApiAnswer> | null;
}

export function judgeOAuth(findings: OAuthFindings): CheckResult {
  if (!findings.configured)
    return skip('oauth', 'not configured: payment intents and alerts do not run (SVC_OAUTH_CLIENT_ID unset)');
  const { stored, probe } = findings;
  if (stored === null)
    return skip('oauth', 'not checked: the warehouse is not reachable and migrated (see above)');
  if (stored.needsReauthorization)
    return fail(
      'oauth',
      'the refresh token was revoked (invalid_grant)',
      'run `rewards-etl auth url` and `auth exchange` again',
    );
  if (probe === null) return skip('oauth', 'not checked');
  if (!probe.ok) {
    const error = probe.error;
    if (error instanceof OAuthNotAuthorizedError)
      return fail(
        'oauth',
        'not connected: no refresh token stored',
        'run `rewards-etl auth url` (or `auth import`)',
      );
    if (error instanceof RefreshTokenRevokedError)
      return fail(
        'oauth',
        'the refresh token was revoked (invalid_grant)',
        'run `rewards-etl auth url` and `auth exchange` again',
      );
    if (error instanceof AuthenticationError)
      return fail(
        'oauth',
        'the partner API refused the access token',
        'run `rewards-etl auth url` and `auth exchange` again',
      );
    return fail('oauth', `connection check failed: ${message(error)}`);
  }
  return ok('oauth', 'connected: GET /payment_intents accepted the bearer token');
}

export interface WebhookFindings {
  url: string | undefined;
  hasSecret: boolean;
  /** Whether payment intents run at all (OAuth configured): without them no alert is ever raised. */
  alertsRaised: boolean;
  /** The unsigned HEAD (or OPTIONS) answer; null when not attempted. */
  probe: Probe<{ method: string; status: number }> | null;
}

/** Never sends an alert: an unsigned HEAD or OPTIONS only proves that something answers at the URL. */
export function judgeWebhook(findings: WebhookFindings): CheckResult {
  const { url, hasSecret, alertsRaised, probe } = findings;
  if (url === undefined) {
    return alertsRaised
      ? warn(
          'webhook',
          'ALERT_WEBHOOK_URL not set: paid alerts are recorded but never delivered',
          'set ALERT_WEBHOOK_URL and ALERT_WEBHOOK_SECRET',
        )
      : skip('webhook', 'not configured (no alerts without OAuth)');
  }
  const target = describeUrl(url);
  if (!hasSecret)
    return fail(
      'webhook',
      `ALERT_WEBHOOK_SECRET not set: alerts to ${target} cannot be signed, none is sent`,
      'set ALERT_WEBHOOK_SECRET',
    );
  if (probe === null) return skip('webhook', 'not checked');
  if (!probe.ok)
    return fail(
      'webhook',
      `${target} unreachable: ${message(probe.error)}`,
      'check ALERT_WEBHOOK_URL and the network path to it',
    );
  const { method, status } = probe.value;
  if (status >= 500)
    return warn(
      'webhook',
      `${target} answered ${method} with ${status}: the receiver may be down`,
      'alerts are retried until it accepts them',
    );
  return ok('webhook', `${target} reachable (answered an unsigned ${method} with ${status})`);
}

/** Scheme, host and path only: a webhook URL may carry a token in its query or userinfo. */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(unparseable URL)';
  }
}

export interface ClockFindings {
  /** The API's `Date` header (whole seconds), or null when no answer carried one. */
  dateHeader: string | null;
  sentAtMs: number;
  receivedAtMs: number;
  /** CHECKINS_SAFETY_LAG: windows close that long before now, so a larger skew cuts rows off. */
  safetyLagMs: number;
}

/** Alert receivers commonly reject signatures older than 5 minutes. */
const SIGNATURE_TOLERANCE_MS = 300_000;
/** Below this, skew is noise: the Date header has one-second resolution. */
const SKEW_NOISE_MS = 2_000;
const SKEW_WARN_MS = 10_000;

/** Skew = server time − local time at the middle of the exchange; ±1 s is the header's resolution. */
export function clockSkewMs(
  findings: Pick<ClockFindings, 'dateHeader' | 'sentAtMs' | 'receivedAtMs'>,
): number | null {
  if (findings.dateHeader === null) return null;
  const serverMs = Date.parse(findings.dateHeader);
  if (Number.isNaN(serverMs)) return null;
  // The header is truncated to the second: its true value lies in [serverMs, serverMs + 1000).
  return serverMs + 500 - (findings.sentAtMs + findings.receivedAtMs) / 2;
}

export function judgeClock(findings: ClockFindings): CheckResult {
  const skew = clockSkewMs(findings);
  if (skew === null) return skip('clock', 'not checked: no Date header from the API');
  const seconds = (Math.abs(skew) / 1000).toFixed(1);
  const direction = skew > 0 ? 'behind' : 'ahead of';
  const text = `this host is ${seconds} s ${direction} the API`;
  const failAt = Math.min(findings.safetyLagMs, SIGNATURE_TOLERANCE_MS);
  if (Math.abs(skew) <= SKEW_NOISE_MS)
    return ok('clock', `in sync with the API (within ${SKEW_NOISE_MS / 1000} s)`);
  if (Math.abs(skew) > failAt)
    return fail(
      'clock',
      `${text}: more than CHECKINS_SAFETY_LAG or the 5 min signature tolerance (windows close on rows still arriving, receivers reject alert signatures)`,
      'run NTP (chrony, systemd-timesyncd) on this host',
    );
  if (Math.abs(skew) > SKEW_WARN_MS)
    return warn('clock', text, 'run NTP (chrony, systemd-timesyncd) on this host');
  return ok('clock', text);
}
