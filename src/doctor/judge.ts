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
import type { TopologyFindings } from './topology-probe.js';
import { fail, message, ok, skip, warn, type Probe } from './check-lines.js';
import type { CheckId, CheckResult } from './doctor-report.js';

// Pure verdicts: each turns what a probe saw into one check line. The probes (probes.ts) do the I/O.
// Redis's are in judge-redis.ts, the clock's in judge-clock.ts.

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

/** The path to Postgres: direct, or a pooler (in which mode). */
export function judgeTopology(probe: Probe<TopologyFindings> | null): CheckResult {
  if (probe === null) return skip('postgres connection', 'not checked: see the postgres line');
  if (!probe.ok)
    return warn(
      'postgres connection',
      `could not tell whether a pooler is in the way: ${message(probe.error)}`,
    );
  const { mode, evidence } = probe.value;
  if (mode === 'statement-pooler')
    return fail(
      'postgres connection',
      `through a statement-mode pooler: transactions are refused (${evidence})`,
      'use pool_mode transaction or session, or connect to Postgres directly',
    );
  if (mode === 'transaction-pooler')
    return ok(
      'postgres connection',
      `through a transaction-mode pooler (${evidence}): supported, nothing relies on a session (leases, not session locks)`,
    );
  return ok('postgres connection', `direct (or a session-mode pooler): ${evidence}`);
}
