import type { AlertSignatureScheme } from '../sync/alert-signature-schemes.js';
import type { AlertEventType } from '../sync/alert-events.js';
import { envSchema, type Env, type LogLevel } from './env-schema.js';
import { packageVersion } from '../package-info.js';
import { Secret } from '../secret.js';
import type { Cadence, ReadKind } from '../sync/read-cadence.js';
import { cadencesFrom } from '../sync/read-ceilings.js';
import { STREAM_FACTS, STREAM_NAMES, type StreamSchedules } from '../sync/stream-facts.js';
import type { MemberPiiMode } from '../sync/member-pii.js';
import {
  DEFAULT_REDIS_URL,
  RedisSettingProblem,
  redisSettingsFrom,
  type RedisSettings,
} from '../redis/settings.js';

import { checkedWebhookSecret, checkRetention, requireHttps, splitWebhookUrl } from './setting-checks.js';
import { ConfigError } from './config-error.js';

export type { MemberPiiMode };

export interface OAuthConfig {
  clientId: string;
  clientSecret: Secret;
  tokenUrl: string;
  redirectUri: string | undefined;
  refreshToken: Secret | undefined;
  encryptionKey: Secret<Buffer>;
}

export interface Config {
  databaseUrl: Secret; // may carry a password
  /** The standalone server's URL (REDIS_URL or its default); see `redis` for Sentinel and Cluster. */
  redisUrl: Secret;
  /** The prefix of every key the project writes: REDIS_PREFIX, hash-tagged in Cluster mode. */
  redisPrefix: string;
  /** Mode (standalone, Sentinel, Cluster), addresses, credentials, TLS: what the connection factory needs. */
  redis: RedisSettings;
  worker: {
    /** A queue worker idle this long while jobs it could take wait is stuck: /readyz fails, the process exits 1. */
    idleTimeoutMs: number;
    /** Redis unreachable with no job progress this long: the worker exits 1 (WORKER_REDIS_UNREACHABLE_TIMEOUT). */
    redisUnreachableTimeoutMs: number;
  };
  api: {
    baseUrl: string | undefined;
    apiKey: Secret | undefined;
    userAgent: string;
    rateLimitRps: number;
    pageSize: number;
    requestTimeoutMs: number;
    /** A response body larger than this is abandoned (ResponseTooLargeError). */
    maxResponseBytes: number;
    /** The longest 429 Retry-After honoured; a longer one fails the pass (RetryAfterTooLongError). */
    retryAfterMaxMs: number;
  };
  oauth: OAuthConfig | undefined;
  checkins: {
    startAt: Date | undefined;
    windowMs: number;
    /** Windows of history older than the look-back (paged once, never re-checked). */
    historyWindowMs: number;
    safetyLagMs: number;
    lookbackMs: number;
    /** How often a complete window inside the look-back is probed again. */
    lookbackEveryMs: number;
    /** A window whose first page says it holds more than this many pages is split. */
    splitPages: number;
    /** A drop of rows is acted on only when a second read this much later confirms it. */
    deleteConfirmAfterMs: number;
    /** Raw check-ins older than this are dropped by whole months; undefined keeps them forever. */
    retentionMs: number | undefined;
    /** check_ins_daily rows older than this are deleted; undefined keeps them forever. */
    rollupRetentionMs: number | undefined;
  };
  /** Each stream's interval, by its `configKey` (src/sync/stream-facts.ts). */
  schedules: StreamSchedules;
  snapshots: { maxDrop: number };
  intents: { pollShare: number };
  members: {
    /** Share of the shared rate limit a members pass may spend. */
    syncShare: number;
    /** How email, phone, birthdate and zipcode land: as given, keyed-hashed, or not at all. */
    pii: MemberPiiMode;
  };
  /** Adaptive read cadence (docs/freshness.md): each kind's floor and ceiling. */
  freshness: { cadences: Record<ReadKind, Cadence> };
  alerts: {
    /** ALERT_WEBHOOK_URL without any `user:password@` (that becomes webhookAuthorization). */
    webhookUrl: string | undefined;
    /** `Basic …` from the user:password ALERT_WEBHOOK_URL carried, sent on every webhook request. */
    webhookAuthorization: Secret | undefined;
    /** The password as written in ALERT_WEBHOOK_URL (percent-encoded), for scrubbing. */
    webhookPassword: Secret | undefined;
    webhookSecret: Secret | undefined;
    /** ALERT_SIGNATURE_SCHEME: `Rewards-Signature` (Stripe's scheme) or the Standard Webhooks headers. */
    signatureScheme: AlertSignatureScheme;
    /** How much of a receiver's reply is read; the rest is dropped unread. */
    maxReplyBytes: number;
    /** The event types raised (ALERT_EVENTS); `payment_intent.paid` alone by default. */
    events: ReadonlySet<AlertEventType>;
  };
  /** Leases (exclusive work: stream passes, the check-in planner, windows): how long one renewal holds. */
  leases: { ttlMs: number };
  httpHost: string;
  httpPort: number;
  /** When set, every endpoint but /healthz and /readyz wants it (Bearer, or the password of Basic auth). */
  statusToken: Secret | undefined;
  logLevel: LogLevel;
  /** STARTUP_TIMEOUT: how long a command waits for Postgres and Redis before it exits 1 naming the setting. */
  startupTimeoutMs: number;
}

/**
 * Parses and validates the environment. Unset and empty variables take their defaults.
 * Throws ConfigError naming the first bad variable.
 */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const present = Object.fromEntries(
    Object.keys(envSchema.shape).flatMap((name) => {
      const value = env[name];
      return value === undefined || value === '' ? [] : [[name, value]];
    }),
  );
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(String(issue?.path[0] ?? 'environment'), issue?.message ?? 'invalid');
  }
  return toConfig(parsed.data);
}

/** A floor above a ceiling would make the ceiling a lie: refused, naming the floor. */
function freshnessCadences(floorMs: number, ceilings: Partial<Record<ReadKind, number>>) {
  const cadences = cadencesFrom(floorMs, ceilings);
  for (const [kind, cadence] of Object.entries(cadences)) {
    if (cadence.floorMs > cadence.ceilingMs)
      throw new ConfigError('FRESHNESS_FLOOR', `must not be longer than the ceiling of ${kind}`);
  }
  return cadences;
}

function toConfig(env: Env): Config {
  requireHttps('SVC_API_BASE_URL', env.SVC_API_BASE_URL, env.SVC_ALLOW_PLAIN_HTTP);
  requireHttps('SVC_OAUTH_TOKEN_URL', env.SVC_OAUTH_TOKEN_URL, env.SVC_ALLOW_PLAIN_HTTP);
  checkRetention(env);
  const baseUrl = env.SVC_API_BASE_URL?.replace(/\/$/, '');
  const redis = toRedisSettings(env);
  return {
    databaseUrl: new Secret(env.DATABASE_URL),
    redisUrl: new Secret(env.REDIS_URL ?? DEFAULT_REDIS_URL),
    redisPrefix: redis.keyPrefix,
    redis,
    worker: {
      idleTimeoutMs: env.WORKER_IDLE_TIMEOUT,
      redisUnreachableTimeoutMs: env.WORKER_REDIS_UNREACHABLE_TIMEOUT,
    },
    api: apiSettings(env, baseUrl),
    oauth: toOAuthConfig(env, baseUrl),
    checkins: checkinSettings(env),
    schedules: streamSchedules(env),
    snapshots: { maxDrop: env.SNAPSHOT_MAX_DROP },
    intents: { pollShare: env.INTENT_POLL_SHARE },
    members: { syncShare: env.MEMBER_SYNC_SHARE, pii: env.MEMBER_PII },
    freshness: { cadences: freshnessCadences(env.FRESHNESS_FLOOR, env.FRESHNESS_CEILINGS) },
    alerts: {
      ...splitWebhookUrl(env.ALERT_WEBHOOK_URL, env.SVC_ALLOW_PLAIN_HTTP),
      webhookSecret: checkedWebhookSecret(env),
      signatureScheme: env.ALERT_SIGNATURE_SCHEME,
      maxReplyBytes: env.ALERT_WEBHOOK_MAX_REPLY_SIZE,
      events: new Set(env.ALERT_EVENTS),
    },
    leases: { ttlMs: env.LEASE_TTL },
    httpHost: env.HTTP_HOST,
    httpPort: env.HTTP_PORT,
    statusToken: env.STATUS_TOKEN,
    logLevel: env.LOG_LEVEL,
    startupTimeoutMs: env.STARTUP_TIMEOUT,
  };
}

function apiSettings(env: Env, baseUrl: string | undefined): Config['api'] {
  return {
    baseUrl,
    apiKey: env.SVC_API_KEY,
    userAgent: env.SVC_USER_AGENT ?? `rewards-etl/${packageVersion()}`,
    rateLimitRps: env.SVC_RATE_LIMIT_RPS,
    pageSize: env.SVC_PAGE_SIZE,
    requestTimeoutMs: env.SVC_REQUEST_TIMEOUT,
    maxResponseBytes: env.SVC_MAX_RESPONSE_SIZE,
    retryAfterMaxMs: env.RETRY_AFTER_MAX,
  };
}

function checkinSettings(env: Env): Config['checkins'] {
  return {
    startAt: env.CHECKINS_START_AT,
    windowMs: env.CHECKINS_WINDOW,
    historyWindowMs: env.CHECKINS_HISTORY_WINDOW,
    safetyLagMs: env.CHECKINS_SAFETY_LAG,
    lookbackMs: env.CHECKINS_LOOKBACK,
    lookbackEveryMs: env.CHECKINS_LOOKBACK_EVERY,
    splitPages: env.CHECKINS_SPLIT_PAGES,
    deleteConfirmAfterMs: env.CHECKINS_DELETE_CONFIRM_AFTER,
    retentionMs: env.CHECKINS_RETENTION,
    rollupRetentionMs: env.CHECKINS_ROLLUP_RETENTION,
  };
}

/** Each stream's interval under its key of `Config.schedules` (src/sync/stream-facts.ts). */
function streamSchedules(env: Env): Config['schedules'] {
  const entries = STREAM_NAMES.map((stream) => {
    const { setting, configKey } = STREAM_FACTS[stream].schedule;
    return [configKey, env[setting]] as const;
  });
  return Object.fromEntries(entries) as StreamSchedules;
}

function toRedisSettings(env: Env): RedisSettings {
  try {
    return redisSettingsFrom(env);
  } catch (error) {
    if (error instanceof RedisSettingProblem) throw new ConfigError(error.variable, error.problem);
    throw error;
  }
}

function toOAuthConfig(env: Env, baseUrl: string | undefined): OAuthConfig | undefined {
  const { SVC_OAUTH_CLIENT_ID: clientId, SVC_OAUTH_CLIENT_SECRET: clientSecret } = env;
  if (clientId === undefined && clientSecret === undefined) return undefined;
  if (clientId === undefined)
    throw new ConfigError('SVC_OAUTH_CLIENT_ID', 'required with SVC_OAUTH_CLIENT_SECRET');
  if (clientSecret === undefined) {
    throw new ConfigError('SVC_OAUTH_CLIENT_SECRET', 'required with SVC_OAUTH_CLIENT_ID');
  }
  if (env.TOKEN_ENCRYPTION_KEY === undefined) {
    throw new ConfigError(
      'TOKEN_ENCRYPTION_KEY',
      'required with OAuth (32 bytes, base64), to encrypt tokens at rest',
    );
  }
  const tokenUrl = env.SVC_OAUTH_TOKEN_URL ?? (baseUrl === undefined ? undefined : `${baseUrl}/oauth/token`);
  if (tokenUrl === undefined) {
    throw new ConfigError('SVC_OAUTH_TOKEN_URL', 'required when SVC_API_BASE_URL is not set');
  }
  return {
    clientId,
    clientSecret,
    tokenUrl,
    redirectUri: env.SVC_OAUTH_REDIRECT_URI,
    refreshToken: env.SVC_OAUTH_REFRESH_TOKEN,
    encryptionKey: env.TOKEN_ENCRYPTION_KEY,
  };
}

/** For commands that talk to the partner API: the base URL is required there (not for demo/simulator). */
export function requireApiBaseUrl(config: Config): string {
  if (config.api.baseUrl === undefined) {
    throw new ConfigError('SVC_API_BASE_URL', 'required: the partner API base URL, ending in /v1');
  }
  return config.api.baseUrl;
}

export function requireApiKey(config: Config): Secret {
  if (config.api.apiKey === undefined) {
    throw new ConfigError(
      'SVC_API_KEY',
      'required: an API key minted with read:checkins, read:restaurant_challenges, read:balance',
    );
  }
  return config.api.apiKey;
}
