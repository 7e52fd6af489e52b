import { setTimeout as sleep } from 'node:timers/promises';
// The decoder alone: the package's index loads all of JOSE (8 MB of a worker's RSS, issue 39).
import { decodeJwt } from 'jose/jwt/decode';
import type { OAuthConfig } from '../../config/config.js';
import { headerValue, type RawResponse } from '../classify-response.js';
import {
  NetworkError,
  RateLimitedError,
  RefreshTokenRevokedError,
  RequestTimeoutError,
  RetryAfterTooLongError,
  TokenEndpointError,
  type RequestSummary,
} from '../errors.js';
import type { HttpTransport } from '../http-transport.js';
import { parseRetryAfter } from '../retry-policy.js';
import { SharedPauseTooLongError, type SharedRateLimiter } from '../shared-rate-limiter.js';
import type { SpendLedger } from '../spend-ledger.js';
import type { BudgetStream } from '../../sync/budget-allocation.js';

// `POST /oauth/token`: refresh and code exchange. Client authentication in the form body
// (client_secret_post); the body never reaches an error or a log, only the endpoint URL does.
//
// A refresh is NOT idempotent: the server rotates the refresh token on every use. Once the request
// may have reached the server (timeout, reset mid-response, 5xx) a retry would present a token that
// may already be spent, so only failures that prove the server never handled it (connection refused,
// connect timeout, 429) are retried here; everything else surfaces to the caller.

export interface IssuedTokens {
  accessToken: string;
  /** The rotated refresh token; null if the server kept the old one valid. */
  refreshToken: string | null;
  accessTokenExpiresAt: Date;
}

export interface TokenEndpoint {
  refresh(refreshToken: string, signal?: AbortSignal): Promise<IssuedTokens>;
  exchangeCode(
    input: { code: string; verifier: string; redirectUri: string },
    signal?: AbortSignal,
  ): Promise<IssuedTokens>;
}

export interface TokenEndpointOptions {
  oauth: Pick<OAuthConfig, 'clientId' | 'clientSecret' | 'tokenUrl'>;
  transport: HttpTransport;
  limiter?: SharedRateLimiter | undefined;
  /** Counts each POST in the shared budget, against `spendsOn`. */
  ledger?: SpendLedger | undefined;
  /**
   * The stream a POST is counted against (default `oauth`): a member's refresh is part of reading
   * that member, so the members' endpoint says `members` and their allowance pays for it.
   */
  spendsOn?: BudgetStream;
  nowMs?: () => number;
  /** RETRY_AFTER_MAX: a longer Retry-After fails with RetryAfterTooLongError. */
  retryAfterMaxMs?: number;
}

/**
 * Runs `attempt` again after each 429 (RateLimitedError, already within RETRY_AFTER_MAX), sleeping
 * between attempts. The sleep is here, outside the attempt, because a refresh attempt holds the
 * token row's lock: every other process would wait on the lock for as long as we slept. A 429
 * proves the server did not handle the request, so presenting the same refresh token (or code)
 * again is safe.
 */
export async function retryAfterRateLimits<T>(
  attempt: () => Promise<T>,
  options: { maxWaits?: number; signal?: AbortSignal | undefined } = {},
): Promise<T> {
  for (let waits = 0; ; waits++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof RateLimitedError) || waits >= (options.maxWaits ?? 5)) throw error;
      await sleep(error.retryAfterMs, undefined, { signal: options.signal });
    }
  }
}

/** Access-token expiry: the JWT's `exp` when readable, else `expires_in`, else one hour. */
export function accessTokenExpiry(accessToken: string, expiresInSeconds: unknown, nowMs: number): Date {
  try {
    const { exp } = decodeJwt(accessToken);
    if (typeof exp === 'number' && Number.isFinite(exp)) return new Date(exp * 1000);
  } catch {
    // Not a JWT: opaque tokens are allowed by OAuth; fall back to expires_in.
  }
  const seconds = typeof expiresInSeconds === 'number' && expiresInSeconds > 0 ? expiresInSeconds : 3600;
  return new Date(nowMs + seconds * 1000);
}

function readOAuthError(body: string): string | null {
  try {
    const parsed = JSON.parse(body) as unknown;
    const error = (parsed as { error?: unknown } | null)?.error;
    return typeof error === 'string' ? error : null;
  } catch {
    return null;
  }
}

const DEFAULT_RETRY_AFTER_MAX_MS = 900_000;

const PROVABLY_UNSENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/** A shared pause is waited out by the caller, not here (this may run under the token row's lock). */
async function refuseWhilePaused(
  limiter: TokenEndpointOptions['limiter'],
  request: RequestSummary,
): Promise<void> {
  const paused = (await limiter?.pausedForMs()) ?? 0;
  if (paused === 0) return;
  // A pause that stops passes (Retry-After above RETRY_AFTER_MAX) is not waited out at all.
  if (((await limiter?.passesStoppedForMs()) ?? 0) > 0) throw new SharedPauseTooLongError(paused, 0, true);
  throw new RateLimitedError(paused, { request });
}

/** Sends the POST once; an error that proves the request never left this host is returned, not thrown. */
async function sendUnlessUnsent(
  transport: TokenEndpointOptions['transport'],
  input: { url: URL; body: string; request: RequestSummary; signal: AbortSignal | undefined },
): Promise<{ response: RawResponse } | { unsent: Error }> {
  try {
    const response = await transport.send({
      method: 'POST',
      url: input.url,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: input.body,
      signal: input.signal,
      summary: input.request,
    });
    return { response };
  } catch (error) {
    const unsent =
      (error instanceof NetworkError && error.code !== null && PROVABLY_UNSENT.has(error.code)) ||
      (error instanceof RequestTimeoutError && error.phase === 'connect');
    if (unsent) return { unsent: error };
    throw error;
  }
}

/** A 429: every process pauses; never sleeps here (see retryAfterRateLimits), the caller waits. */
async function rateLimitedAnswer(
  response: RawResponse,
  options: TokenEndpointOptions,
  request: RequestSummary,
  nowMs: number,
): Promise<Error> {
  const retryAfterMs = parseRetryAfter(headerValue(response.headers, 'retry-after'), nowMs) ?? 1000;
  const capMs = options.retryAfterMaxMs ?? DEFAULT_RETRY_AFTER_MAX_MS;
  await options.limiter?.pauseAll(Math.min(retryAfterMs, capMs), { stopPasses: retryAfterMs > capMs });
  if (retryAfterMs > capMs) return new RetryAfterTooLongError(retryAfterMs, capMs, { request, status: 429 });
  return new RateLimitedError(retryAfterMs, { request, status: 429 });
}

function toTokens(
  response: RawResponse,
  grant: string,
  request: RequestSummary,
  nowMs: number,
): IssuedTokens {
  const details = { request, status: response.status };
  if (response.status >= 200 && response.status < 300) {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(response.body) as Record<string, unknown>;
    } catch (error) {
      throw new TokenEndpointError('invalid_json', false, { ...details, cause: error });
    }
    const accessToken = parsed['access_token'];
    const refreshToken = parsed['refresh_token'];
    if (typeof accessToken !== 'string' || accessToken === '') {
      throw new TokenEndpointError('no_access_token', false, details);
    }
    return {
      accessToken,
      refreshToken: typeof refreshToken === 'string' && refreshToken !== '' ? refreshToken : null,
      accessTokenExpiresAt: accessTokenExpiry(accessToken, parsed['expires_in'], nowMs),
    };
  }
  const code = readOAuthError(response.body);
  if (code === 'invalid_grant' && grant === 'refresh_token') throw new RefreshTokenRevokedError(details);
  throw new TokenEndpointError(code ?? `http_${response.status}`, response.status >= 500, details);
}

export function createTokenEndpoint(options: TokenEndpointOptions): TokenEndpoint {
  const nowMs = options.nowMs ?? Date.now;
  const url = new URL(options.oauth.tokenUrl);
  const spendsOn = options.spendsOn ?? 'oauth';

  async function post(
    form: Record<string, string>,
    grant: string,
    signal?: AbortSignal,
  ): Promise<IssuedTokens> {
    const body = new URLSearchParams({
      ...form,
      client_id: options.oauth.clientId,
      client_secret: options.oauth.clientSecret.reveal(),
    }).toString();
    const request: RequestSummary = { method: 'POST', url: url.toString(), params: { grant_type: grant } };
    // The only resend: a POST that provably never left this host (a refresh that may have reached
    // the server is never sent again: the server may have rotated the refresh token).
    for (let unsentTries = 0; ; unsentTries++) {
      await refuseWhilePaused(options.limiter, request);
      await options.limiter?.acquire({ priority: 'high', signal });
      // Accounting only (spend-ledger.ts), not awaited: a count that cannot be written (or waits out a
      // Redis failover) never holds a refresh back or moves it out of its slot.
      void options.ledger?.record(spendsOn).catch(() => undefined);
      const sent = await sendUnlessUnsent(options.transport, { url, body, request, signal });
      if ('unsent' in sent) {
        if (unsentTries < 3) continue;
        throw sent.unsent;
      }
      if (sent.response.status === 429)
        throw await rateLimitedAnswer(sent.response, options, request, nowMs());
      return toTokens(sent.response, grant, request, nowMs());
    }
  }

  return {
    refresh: (refreshToken, signal) =>
      post({ grant_type: 'refresh_token', refresh_token: refreshToken }, 'refresh_token', signal),
    exchangeCode: (input, signal) =>
      post(
        {
          grant_type: 'authorization_code',
          code: input.code,
          code_verifier: input.verifier,
          redirect_uri: input.redirectUri,
        },
        'authorization_code',
        signal,
      ),
  };
}
