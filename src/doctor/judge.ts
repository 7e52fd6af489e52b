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
import { describeOffset, type ClockOffset } from '../clock-offset.js';
import type { OAuthStatus } from '../status/status-report.js';
import type { TopologyFindings } from './topology-probe.js';
import type { RedisMode } from '../redis/settings.js';
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
  const parts = versionParts(version);
  for (let i = 0; i < floor.length; i++) {
    const have = parts[i] ?? 0;
    const need = floor[i] ?? 0;
    if (have !== need) return have < need;
  }
  return false;
}

/** What `doctor` read from each primary: standalone and Sentinel have one, a Cluster several. */
export interface RedisFindings {
  primaries: Array<{ address: string; info: string }>;
}

/** The settings to check, per mode, when Redis cannot be reached. */
const REDIS_SETTINGS_HINT: Record<RedisMode, string> = {
  standalone: 'check REDIS_URL and that Redis runs',
  sentinel:
    'check REDIS_SENTINELS, REDIS_SENTINEL_NAME, the passwords, and that the Sentinels know a primary',
  cluster: 'check REDIS_CLUSTER_NODES, REDIS_PASSWORD, and that the cluster is up (cluster_state:ok)',
};

/** `describeRedis` of the settings (mode and where), then what the primaries said: version, count. */
export function judgeRedis(probe: Probe<RedisFindings>, mode: RedisMode, where: string): CheckResult {
  if (!probe.ok)
    return fail('redis', `${where}: unreachable: ${message(probe.error)}`, REDIS_SETTINGS_HINT[mode]);
  const { primaries } = probe.value;
  const versions = [...new Set(primaries.map((p) => parseRedisInfo(p.info).get('redis_version') ?? '?'))];
  const lowest = versions
    .filter((v) => v !== '?')
    .reduce<string | undefined>(
      (low, v) => (low === undefined || versionBelow(v, versionParts(low)) ? v : low),
      undefined,
    );
  const layout =
    mode === 'cluster'
      ? `${primaries.length} primaries (${primaries.map((p) => p.address).join(', ')})`
      : `primary ${primaries[0]?.address ?? '?'}`;
  const seen = `${where}: reachable, ${layout}`;
  if (lowest === undefined) return warn('redis', `${seen}, version unknown (no redis_version in INFO)`);
  const version = `Redis ${versions.join(', ')}`;
  if (versionBelow(lowest, REDIS_MINIMUM))
    return fail(
      'redis',
      `${seen}, ${version}: BullMQ needs ${REDIS_MINIMUM.join('.')} or newer`,
      'upgrade Redis',
    );
  if (versionBelow(lowest, REDIS_RECOMMENDED))
    return warn('redis', `${seen}, ${version}: BullMQ recommends ${REDIS_RECOMMENDED.join('.')} or newer`);
  return ok('redis', `${seen}, ${version}`);
}

function versionParts(version: string): number[] {
  return version.split('.').map((part) => Number.parseInt(part, 10) || 0);
}

/**
 * BullMQ keeps jobs, schedulers and locks as ordinary keys: under any eviction policy a full Redis
 * silently deletes some of them (lost schedules come back within 30 s, but a job or its lock
 * evicted mid-run is gone). Only `noeviction` makes a full Redis fail loudly instead.
 */
export function judgeEvictionPolicy(probe: Probe<RedisFindings>): CheckResult {
  if (!probe.ok) return skip('redis eviction', 'not checked: Redis unreachable');
  const { primaries } = probe.value;
  const policies = primaries.map((p) => ({
    address: p.address,
    policy: parseRedisInfo(p.info).get('maxmemory_policy'),
  }));
  const where = (list: typeof policies) =>
    primaries.length === 1 ? '' : ` on ${list.map((p) => p.address).join(', ')}`;
  const unknown = policies.filter((p) => p.policy === undefined);
  const evicting = policies.filter((p) => p.policy !== undefined && p.policy !== 'noeviction');
  if (evicting.length > 0) {
    const names = [...new Set(evicting.map((p) => p.policy))].join(', ');
    return warn(
      'redis eviction',
      `maxmemory-policy ${names}${where(evicting)}: when Redis is full it evicts keys, and BullMQ's jobs, locks and schedules are keys (queued work silently lost)`,
      'set maxmemory-policy noeviction on every primary (BullMQ requires it), or give this Redis its own instance',
    );
  }
  if (unknown.length > 0)
    return warn(
      'redis eviction',
      `maxmemory-policy unknown${where(unknown)} (no maxmemory_policy in INFO)`,
      'make sure it is noeviction',
    );
  return ok(
    'redis eviction',
    primaries.length === 1
      ? 'maxmemory-policy noeviction'
      : `maxmemory-policy noeviction on all ${primaries.length} primaries`,
  );
}

/**
 * What survives the loss of a primary. Without a replica, nothing takes over: the pipeline waits for
 * that server to come back. Without AOF (and with a replica that missed the last writes), a restart
 * or a failover loses recent queue writes: schedules are restored by the workers and windows
 * re-planned from Postgres, but alert-catch-up and window jobs wait for the next planner tick.
 */
export function judgeRedisFailover(probe: Probe<RedisFindings>): CheckResult {
  if (!probe.ok) return skip('redis failover', 'not checked: Redis unreachable');
  const { primaries } = probe.value;
  const facts = primaries.map((p) => {
    const info = parseRedisInfo(p.info);
    return {
      address: p.address,
      replicas: Number(info.get('connected_slaves') ?? '0') || 0,
      aof: info.get('aof_enabled') === '1',
    };
  });
  const lonely = facts.filter((f) => f.replicas === 0);
  const noAof = facts.filter((f) => !f.aof);
  const named = (list: typeof facts) =>
    primaries.length === 1 ? 'the primary' : list.map((f) => f.address).join(', ');
  const problems = [
    ...(lonely.length > 0 ? [`no replica for ${named(lonely)}: nothing takes over if it fails`] : []),
    ...(noAof.length > 0
      ? [
          `no AOF (appendonly no) on ${named(noAof)}: a restart loses what was written since the last snapshot`,
        ]
      : []),
  ];
  if (problems.length > 0)
    return warn(
      'redis failover',
      problems.join('; '),
      'run a replica per primary (Sentinel or Cluster, or a managed service with automatic failover) and appendonly yes where the service allows it',
    );
  const replicas = facts.map((f) => f.replicas).join(', ');
  return ok('redis failover', `every primary has a replica (${replicas}) and AOF on`);
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
  /** Postgres's clock − this host's (the pipeline's clock is Postgres's); null when not measured. */
  postgres?: ClockOffset | null;
  /** Redis's clock − this host's (the shared rate limit's slots); null when not measured. */
  redis?: ClockOffset | null;
}

/** Alert receivers commonly reject signatures older than 5 minutes. */
const SIGNATURE_TOLERANCE_MS = 300_000;
/** Below this, skew is noise: the Date header has one-second resolution. */
const SKEW_NOISE_MS = 2_000;
const SKEW_WARN_MS = 10_000;
/** A host clock this far from Postgres's or Redis's is harmless to the pipeline, but surely a mistake. */
const ABSURD_OFFSET_MS = 3_600_000;

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

/**
 * The clocks. The pipeline's times are Postgres's (leases, due times, stored instants) and the rate
 * limit's slots Redis's, so this host's offset to either is information, not a problem (a warning
 * only when it is absurd: this host's log timestamps are then off). What still matters is the
 * partner API against the pipeline's clock: windows close CHECKINS_SAFETY_LAG before the
 * pipeline's now, and receivers check alert signatures stamped with it.
 */
export function judgeClock(findings: ClockFindings): CheckResult {
  const apiVsHost = clockSkewMs(findings);
  const postgres = findings.postgres ?? null;
  const redis = findings.redis ?? null;
  if (apiVsHost === null && postgres === null && redis === null)
    return skip('clock', 'not checked: no answer from the API, Postgres or Redis');
  const parts: string[] = [];
  if (postgres !== null) parts.push(describeOffset(postgres, "Postgres (the pipeline's clock)"));
  if (redis !== null) parts.push(describeOffset(redis, "Redis (the rate limit's clock)"));
  let status: 'ok' | 'warn' | 'fail' = 'ok';
  let fix: string | undefined;
  if (apiVsHost !== null) {
    // Without a Postgres measurement the pipeline runs on this host's clock.
    const reference = postgres === null ? 'this host' : 'Postgres';
    const skew = apiVsHost - (postgres?.offsetMs ?? 0);
    const seconds = (Math.abs(skew) / 1000).toFixed(1);
    const text =
      Math.abs(skew) <= SKEW_NOISE_MS
        ? `${reference === 'this host' ? 'in sync with the API' : 'Postgres is in sync with the API'} (within ${SKEW_NOISE_MS / 1000} s)`
        : `${reference} is ${seconds} s ${skew > 0 ? 'behind' : 'ahead of'} the API`;
    const ntp = `run NTP (chrony, systemd-timesyncd) on ${reference === 'this host' ? 'this host' : 'the Postgres host'}`;
    if (Math.abs(skew) > Math.min(findings.safetyLagMs, SIGNATURE_TOLERANCE_MS)) {
      status = 'fail';
      fix = ntp;
      parts.push(
        `${text}: more than CHECKINS_SAFETY_LAG or the 5 min signature tolerance (windows close on rows still arriving, receivers reject alert signatures)`,
      );
    } else {
      if (Math.abs(skew) > SKEW_WARN_MS) {
        status = 'warn';
        fix = ntp;
      }
      parts.push(text);
    }
  }
  const absurd = [postgres, redis].some(
    (offset) => offset !== null && Math.abs(offset.offsetMs) > ABSURD_OFFSET_MS,
  );
  if (status === 'ok' && absurd) {
    status = 'warn';
    fix =
      "run NTP on this host: harmless to the pipeline (its times are Postgres's and Redis's), but this host's log timestamps are off";
  }
  const detail = parts.join('; ');
  if (status === 'ok') return ok('clock', detail);
  return status === 'warn' ? warn('clock', detail, fix) : fail('clock', detail, fix);
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
