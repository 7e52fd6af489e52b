import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from '../redis/connection.js';
import { sql, type Kysely } from 'kysely';
import { buildUrl, summarizeRequest, type QueryParams } from '../api/api-requester.js';
import { classifyResponse, headerValue } from '../api/classify-response.js';
import type { CredentialKind } from '../api/errors.js';
import type { HttpTransport } from '../api/http-transport.js';
import { OAuthTokenManager } from '../api/oauth/token-manager.js';
import { createTokenEndpoint } from '../api/oauth/token-endpoint.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../log.js';
import { withTimeout } from '../with-timeout.js';
import { readOAuth } from '../status/warehouse-figures.js';
import { migrationProgress } from '../warehouse/migrate.js';
import type { DB } from '../warehouse/schema.js';
import type { Probe } from './check-lines.js';
import type { ApiAnswer } from './judge.js';
import type { RedisFindings } from './judge-redis.js';
import { createTokenStore } from '../warehouse/oauth-tokens.js';

// The I/O behind `doctor`: each probe asks one thing, bounded in time, and returns what it saw
// (never throws). The verdicts are in judge.ts.

export const PROBE_TIMEOUT_MS = 5_000;

export interface ProbeDeps {
  config: Config;
  db: Kysely<DB>;
  redis: RedisClient;
  /** Why the connection failed, when it did: more telling than the command's own error. */
  redisConnectError?: () => unknown;
  /** `INFO` of each primary; tests inject another reply instead of reconfiguring a shared Redis. */
  redisInfo?: (primary: Redis) => Promise<string>;
  /** The pipeline's own HTTP layer: the configured User-Agent and timeouts on every request. */
  transport: HttpTransport;
  logger: Logger;
  nowMs?: () => number;
}

async function attempt<T>(run: () => Promise<T>, what: string): Promise<Probe<T>> {
  try {
    return { ok: true, value: await withTimeout(run(), PROBE_TIMEOUT_MS, what) };
  } catch (error) {
    return { ok: false, error };
  }
}

export function probePostgres(db: Kysely<DB>): Promise<Probe<{ versionNum: number }>> {
  return attempt(async () => {
    const { rows } = await sql<{ v: string }>`select current_setting('server_version_num') as v`.execute(db);
    return { versionNum: Number(rows[0]?.v ?? 0) };
  }, 'postgres');
}

export function probeMigrations(db: Kysely<DB>) {
  return attempt(() => migrationProgress(db), 'migration check');
}

/**
 * `INFO` of every primary: the one server (standalone), the primary the Sentinels named (Sentinel),
 * or each master of the Cluster's slot map.
 */
export async function probeRedis(
  deps: Pick<ProbeDeps, 'redis' | 'redisInfo' | 'redisConnectError'>,
): Promise<Probe<RedisFindings>> {
  const probe = await attempt(async () => {
    await deps.redis.ping();
    const primaries = deps.redis instanceof Cluster ? deps.redis.nodes('master') : [deps.redis];
    if (primaries.length === 0) throw new Error('the cluster named no primary');
    return {
      primaries: await Promise.all(
        primaries.map(async (primary) => ({
          address: addressOf(primary),
          info: await (deps.redisInfo?.(primary) ?? primary.info()),
        })),
      ),
    };
  }, 'redis');
  const connectError = probe.ok ? undefined : deps.redisConnectError?.();
  return connectError === undefined ? probe : { ok: false, error: connectError };
}

/** Where a connection actually goes: the socket's peer (a Sentinel resolved it), else its options. */
function addressOf(client: Redis): string {
  const stream = client.stream as { remoteAddress?: string; remotePort?: number } | undefined;
  const host = stream?.remoteAddress ?? client.options.host ?? '?';
  const port = stream?.remotePort ?? client.options.port ?? 0;
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export interface ApiExchange {
  probe: Probe<ApiAnswer>;
  /** The answer's `Date` header and when the request left and the answer came back (clock skew). */
  dateHeader: string | null;
  sentAtMs: number;
  receivedAtMs: number;
}

/** One GET through the pipeline's transport, classified like any pipeline request; no retry. */
export async function apiGet(
  deps: Pick<ProbeDeps, 'config' | 'transport' | 'nowMs'>,
  path: string,
  params: QueryParams,
  credential: { kind: CredentialKind; value: string },
): Promise<ApiExchange> {
  const nowMs = deps.nowMs ?? Date.now;
  const url = buildUrl(deps.config.api.baseUrl ?? '', path, params);
  const summary = summarizeRequest('GET', url);
  const headers =
    credential.kind === 'api-key'
      ? { 'x-api-key': credential.value }
      : { authorization: `Bearer ${credential.value}` };
  const sentAtMs = nowMs();
  try {
    const raw = await deps.transport.send({ method: 'GET', url, headers, summary });
    const receivedAtMs = nowMs();
    const classified = classifyResponse(raw, {
      credential: credential.kind,
      request: summary,
      nowMs: receivedAtMs,
    });
    return {
      probe: classified.ok
        ? { ok: true, value: { status: raw.status, json: classified.json } }
        : { ok: false, error: classified.error },
      dateHeader: headerValue(raw.headers, 'date'),
      sentAtMs,
      receivedAtMs,
    };
  } catch (error) {
    return { probe: { ok: false, error }, dateHeader: null, sentAtMs, receivedAtMs: nowMs() };
  }
}

/**
 * The OAuth connection, live: a bearer token from the shared token store (refreshed only if it
 * is due, exactly as a worker would, under the same row lock) and `GET /payment_intents?page_size=1`.
 */
export async function probeOAuthConnection(deps: ProbeDeps): Promise<Probe<ApiAnswer>> {
  const oauth = deps.config.oauth;
  if (oauth === undefined) return { ok: false, error: new Error('OAuth is not configured') };
  const tokens = new OAuthTokenManager({
    store: createTokenStore(deps.db),
    endpoint: createTokenEndpoint({ oauth, transport: deps.transport }),
    encryptionKey: oauth.encryptionKey.reveal(),
    initialRefreshToken: oauth.refreshToken?.reveal(),
    logger: deps.logger,
  });
  let bearer: string;
  try {
    bearer = await withTimeout(tokens.getAccessToken(), PROBE_TIMEOUT_MS * 2, 'OAuth token');
  } catch (error) {
    return { ok: false, error };
  }
  return (await apiGet(deps, '/payment_intents', { page_size: 1 }, { kind: 'bearer', value: bearer })).probe;
}

export function probeStoredOAuth(db: Kysely<DB>) {
  return attempt(() => readOAuth(db, true), 'oauth token state');
}

/**
 * An unsigned `HEAD` (never a POST, never a fake alert): any HTTP answer proves something listens
 * at the URL; only a real, signed alert proves the receiver accepts it.
 */
export function probeWebhook(
  url: string,
  userAgent: string,
  /** `Basic …` from ALERT_WEBHOOK_URL's user:password, as alerts send it. */
  authorization?: string,
): Promise<Probe<{ method: string; status: number }>> {
  return attempt(async () => {
    try {
      const response = await fetch(url, {
        method: 'HEAD',
        redirect: 'manual',
        headers: {
          'user-agent': userAgent,
          ...(authorization === undefined ? {} : { authorization }),
        },
        signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      });
      return { method: 'HEAD', status: response.status };
    } catch (error) {
      // fetch says only "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, a TLS error) is its cause.
      const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
      const reason = typeof cause?.code === 'string' ? cause.code : cause?.message;
      throw new Error(typeof reason === 'string' ? reason : (error as Error).message, { cause: error });
    }
  }, 'webhook');
}
