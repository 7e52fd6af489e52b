import parseBytes from 'bytes';
import { z } from 'zod';
import { parseDuration } from '../duration.js';
import { ALERT_SIGNATURE_SCHEMES } from '../sync/alert-signature-schemes.js';
import { Secret } from '../secret.js';
import { DEFAULT_ALERT_EVENTS, parseAlertEvents, type AlertEventType } from '../sync/alert-events.js';
import { parseReadCeilings } from '../sync/read-ceilings.js';
import { STREAM_FACTS, STREAM_NAMES, type ScheduleSetting } from '../sync/stream-facts.js';

// Every environment variable config.ts reads, as one zod schema: each variable's parser, its
// default and its bounds. config.ts turns the parsed result into a Config.

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export type LogLevel = (typeof LOG_LEVELS)[number];

const duration = z.string().transform((text, ctx) => {
  try {
    return parseDuration(text);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
    return z.NEVER;
  }
});

const positiveDuration = duration.refine((ms) => ms > 0, 'must be longer than 0');

const url = (protocols: string[]) =>
  z.string().refine(
    (text) => {
      try {
        return protocols.includes(new URL(text).protocol);
      } catch {
        return false;
      }
    },
    `must be a URL (${protocols.join(' or ')})`,
  );

const positiveNumber = z.string().transform((text, ctx) => {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0) {
    ctx.addIssue({ code: 'custom', message: `"${text}" is not a positive number` });
    return z.NEVER;
  }
  return value;
});

const integerIn = (min: number, max: number) =>
  z.string().transform((text, ctx) => {
    const value = Number(text);
    if (!/^\d+$/.test(text.trim()) || value < min || value > max) {
      ctx.addIssue({ code: 'custom', message: `"${text}" is not a whole number from ${min} to ${max}` });
      return z.NEVER;
    }
    return value;
  });

const fraction = z.string().transform((text, ctx) => {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0 || value > 1) {
    ctx.addIssue({ code: 'custom', message: `"${text}" is not a number from 0 to 1` });
    return z.NEVER;
  }
  return value;
});

/** A size such as `32MB`, `64KB` or a plain number of bytes (units are powers of 1024). */
const byteSize = z.string().transform((text, ctx) => {
  const value = /^\s*\d+(\.\d+)?\s*([kmgtp]?b)?\s*$/i.test(text) ? parseBytes.parse(text) : null;
  if (value === null || !Number.isFinite(value) || value < 1) {
    ctx.addIssue({ code: 'custom', message: `"${text}" is not a size such as 32MB, 64KB or 1048576` });
    return z.NEVER;
  }
  return Math.floor(value);
});

const isoInstant = z.string().transform((text, ctx) => {
  const date = new Date(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(date.getTime())) {
    ctx.addIssue({ code: 'custom', message: `"${text}" is not an ISO 8601 date-time` });
    return z.NEVER;
  }
  return date;
});

const secret = z
  .string()
  .min(1)
  .transform((text) => new Secret(text));

/** A bearer token people type into a scraper's config: long enough that guessing it is hopeless. */
const STATUS_TOKEN_MIN_LENGTH = 16;

/** setTimeout fires at once for delays above 2^31 - 1 ms (~24.8 days): no wait may be longer. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

const flag = z
  .string()
  .trim()
  .toLowerCase()
  .refine((text) => ['true', 'false', '1', '0'].includes(text), 'must be true or false')
  .transform((text) => text === 'true' || text === '1');

const encryptionKey = z.string().transform((text, ctx) => {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length !== 32 || bytes.toString('base64').replace(/=+$/, '') !== text.trim().replace(/=+$/, '')) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be 32 bytes encoded as base64 (try: openssl rand -base64 32)',
    });
    return z.NEVER;
  }
  return new Secret(bytes);
});

/** Every environment variable we read, with its default; the single place that knows their names. */
/**
 * Each stream's interval setting (`CHECKINS_EVERY`, `RESTAURANTS_EVERY`, …) with its default, from
 * the stream's facts (src/sync/stream-facts.ts): a positive duration.
 */
function streamIntervals() {
  const entries = STREAM_NAMES.map((stream) => {
    const { setting, defaultMs } = STREAM_FACTS[stream].schedule;
    return [setting, positiveDuration.default(defaultMs)] as const;
  });
  return Object.fromEntries(entries) as Record<ScheduleSetting, (typeof entries)[number][1]>;
}

export const envSchema = z.object({
  DATABASE_URL: url(['postgres:', 'postgresql:']).default('postgres://postgres@127.0.0.1:5432/rewards_etl'),
  // No default here: whether it was set decides between it and REDIS_SENTINELS / REDIS_CLUSTER_NODES.
  REDIS_URL: url(['redis:', 'rediss:']).optional(),
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.{}-]+$/, 'letters, digits, "_", ".", "-" (and one {hash tag}) only')
    .default('rewards-etl'),
  REDIS_SENTINELS: z.string().trim().min(1).optional(),
  REDIS_SENTINEL_NAME: z.string().trim().min(1).optional(),
  REDIS_SENTINEL_PASSWORD: secret.optional(),
  REDIS_CLUSTER_NODES: z.string().trim().min(1).optional(),
  REDIS_USERNAME: z.string().trim().min(1).optional(),
  REDIS_PASSWORD: secret.optional(),
  REDIS_TLS: flag.optional(),
  WORKER_IDLE_TIMEOUT: positiveDuration
    .refine(
      (ms) => ms >= 5_000,
      'must be at least 5s (a healthy worker may wait 10 s for a job it was told about)',
    )
    .default(60_000),
  // Issue 38: a worker cut off from Redis, with no job progress, for this long exits 1 (outage-watch.ts).
  WORKER_REDIS_UNREACHABLE_TIMEOUT: positiveDuration
    .refine((ms) => ms >= 10_000, 'must be at least 10s (a Sentinel or Cluster failover takes seconds)')
    .default(120_000),
  SVC_API_BASE_URL: url(['http:', 'https:'])
    .refine((text) => /\/v1\/?$/.test(text), 'must end in /v1')
    .optional(),
  SVC_API_KEY: secret.optional(),
  SVC_USER_AGENT: z.string().trim().min(1, 'must not be empty').optional(),
  SVC_OAUTH_CLIENT_ID: z.string().min(1).optional(),
  SVC_OAUTH_CLIENT_SECRET: secret.optional(),
  SVC_OAUTH_REFRESH_TOKEN: secret.optional(),
  SVC_OAUTH_TOKEN_URL: url(['http:', 'https:']).optional(),
  SVC_ALLOW_PLAIN_HTTP: flag.default(false),
  SVC_OAUTH_REDIRECT_URI: url(['http:', 'https:']).optional(),
  TOKEN_ENCRYPTION_KEY: encryptionKey.optional(),
  SVC_RATE_LIMIT_RPS: positiveNumber.default(10),
  SVC_PAGE_SIZE: integerIn(1, 10_000).default(100),
  SVC_REQUEST_TIMEOUT: positiveDuration.default(30_000),
  SVC_MAX_RESPONSE_SIZE: byteSize.default(32 * 1024 * 1024),
  RETRY_AFTER_MAX: positiveDuration
    .refine((ms) => ms <= MAX_TIMER_MS, 'must be at most 24d (a longer timer overflows)')
    .default(900_000),
  CHECKINS_START_AT: isoInstant.optional(),
  CHECKINS_WINDOW: positiveDuration.default(3_600_000),
  CHECKINS_HISTORY_WINDOW: positiveDuration.default(86_400_000),
  CHECKINS_SAFETY_LAG: duration.default(60_000),
  CHECKINS_LOOKBACK: duration.default(86_400_000),
  CHECKINS_LOOKBACK_EVERY: positiveDuration.default(900_000),
  CHECKINS_SPLIT_PAGES: integerIn(1, 100_000).default(50),
  CHECKINS_DELETE_CONFIRM_AFTER: positiveDuration.default(1_800_000),
  // Off when unset (docs/warehouse-scale.md#retention). A day at least: retention works in whole months.
  CHECKINS_RETENTION: positiveDuration.refine((ms) => ms >= 86_400_000, 'must be at least 1d').optional(),
  CHECKINS_ROLLUP_RETENTION: positiveDuration
    .refine((ms) => ms >= 86_400_000, 'must be at least 1d')
    .optional(),
  ...streamIntervals(),
  SNAPSHOT_MAX_DROP: fraction.default(0.2),
  INTENT_POLL_SHARE: fraction.default(0.5),
  MEMBER_SYNC_SHARE: fraction.default(0.2),
  MEMBER_PII: z.enum(['store', 'hash', 'omit']).default('store'),
  FRESHNESS_FLOOR: positiveDuration.default(300_000),
  FRESHNESS_CEILINGS: z
    .string()
    .transform((text, ctx) => {
      try {
        return parseReadCeilings(text);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    })
    .default({}),
  LEASE_TTL: positiveDuration
    .refine((ms) => ms >= 3_000 && ms <= 600_000, 'must be from 3s to 10m')
    .default(30_000),
  ALERT_WEBHOOK_URL: url(['http:', 'https:']).optional(),
  ALERT_WEBHOOK_SECRET: secret.optional(),
  ALERT_SIGNATURE_SCHEME: z
    .enum(ALERT_SIGNATURE_SCHEMES, { error: `must be one of ${ALERT_SIGNATURE_SCHEMES.join(', ')}` })
    .default('rewards'),
  ALERT_WEBHOOK_MAX_REPLY_SIZE: byteSize.default(64 * 1024),
  ALERT_EVENTS: z
    .string()
    .default(DEFAULT_ALERT_EVENTS.join(','))
    .transform((text, ctx): AlertEventType[] => {
      const parsed = parseAlertEvents(text);
      if (parsed.ok) return parsed.events;
      ctx.issues.push({ code: 'custom', message: parsed.reason, input: text });
      return z.NEVER;
    }),
  HTTP_HOST: z.string().trim().min(1, 'must not be empty').default('127.0.0.1'),
  HTTP_PORT: integerIn(0, 65_535).default(9464),
  STATUS_TOKEN: z
    .string()
    .min(STATUS_TOKEN_MIN_LENGTH, `must be at least ${STATUS_TOKEN_MIN_LENGTH} characters`)
    .transform((text) => new Secret(text))
    .optional(),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  // How long a command waits at start-up for Postgres and Redis before it exits 1 naming the setting.
  STARTUP_TIMEOUT: duration
    .refine((ms) => ms >= 0 && ms <= 600_000, 'must be from 0s to 10m')
    .default(20_000),
});

export type Env = z.output<typeof envSchema>;
