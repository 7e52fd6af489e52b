import { setTimeout as sleep } from 'node:timers/promises';
import pRetry, { AbortError } from 'p-retry';
import type { Logger } from '../log.js';
import type { Secret } from '../secret.js';
import { classifyResponse, type Classified } from './classify-response.js';
import { budgetStreamForPath, credentialForPath, routeTemplate } from './credential-routing.js';
import {
  AuthenticationError,
  PartnerApiError,
  RateLimitedError,
  RetryAfterTooLongError,
  type CredentialKind,
  type RequestSummary,
} from './errors.js';
import type { HttpTransport } from './http-transport.js';
import type { ApiMetrics } from './metrics.js';
import type { RequestPriority } from './priority-gate.js';
import { fullJitterDelayMs, type BackoffOptions } from './retry-policy.js';
import type { SharedRateLimiter } from './shared-rate-limiter.js';
import type { SpendLedger } from './spend-ledger.js';

// The only HTTP retry layer (BullMQ attempts retry whole jobs; these retry one request). Per attempt:
// wait for the shared rate limit, send with exactly the credential the path's family takes, classify.
// A 429 pauses every process for Retry-After and is retried without using the retry budget; other
// retryable failures back off with full jitter; a bearer 401 gets one forced token refresh.

/** Bearer tokens for `/users/me/*` and `/payment_intents/*`. */
export interface AccessTokenProvider {
  getAccessToken(signal?: AbortSignal): Promise<string>;
  /** The server rejected `rejected`: refresh (once across processes) and return the new token. */
  refreshAfterRejection(rejected: string, signal?: AbortSignal): Promise<string>;
}

export type QueryParams = Record<string, string | number | undefined>;

export interface RequestOptions {
  signal?: AbortSignal | undefined;
  priority?: RequestPriority;
}

export interface ApiRequester {
  getJson(path: string, params?: QueryParams, options?: RequestOptions): Promise<unknown>;
}

export interface RetrySettings {
  /** Retries after the first attempt (429s do not count). */
  retries: number;
  /** Total time for one request, waits included. */
  maxTotalMs: number;
  backoff: BackoffOptions;
  /** RETRY_AFTER_MAX: the longest 429 wait honoured; longer ones fail with RetryAfterTooLongError. */
  retryAfterMaxMs: number;
}

export const DEFAULT_RETRY_SETTINGS: RetrySettings = {
  retries: 5,
  maxTotalMs: 120_000,
  backoff: { baseMs: 500, capMs: 15_000 },
  retryAfterMaxMs: 900_000,
};

export interface ApiRequesterOptions {
  baseUrl: string;
  apiKey: Secret | undefined;
  tokens: AccessTokenProvider | undefined;
  transport: HttpTransport;
  limiter: SharedRateLimiter;
  /** Counts each request sent against its route family's stream (one budget across streams). */
  ledger?: SpendLedger | undefined;
  logger: Logger;
  metrics: ApiMetrics;
  retry?: Partial<RetrySettings>;
  nowMs?: () => number;
  random?: () => number;
}

export function buildUrl(baseUrl: string, path: string, params: QueryParams): URL {
  const url = new URL(`${baseUrl.replace(/\/$/, '')}${path}`);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.set(name, String(value));
  }
  return url;
}

export function summarizeRequest(method: string, url: URL): RequestSummary {
  const clean = new URL(url.toString());
  clean.username = '';
  clean.password = '';
  const params = Object.fromEntries(clean.searchParams.entries());
  clean.search = '';
  return { method, url: clean.toString(), params };
}

/**
 * A failure to get a bearer token is not this layer's to retry. The token refresh is a POST that
 * rotates the refresh token: once it may have reached the server it must not be sent again
 * (src/api/oauth/token-endpoint.ts), and the token manager already waits out the 429s that prove
 * it was not. So it ends the request as it is (p-retry's AbortError: no retry, no backoff, the
 * original error rethrown); the next pass or job attempt is the one retry layer for a refresh.
 */
async function notRetriedHere<T>(acquiring: Promise<T>): Promise<T> {
  try {
    return await acquiring;
  } catch (error) {
    throw new AbortError(error instanceof Error ? error : new Error(String(error)));
  }
}

/** What every step of one requester shares: its settings and its injected dependencies. */
interface Requester {
  options: ApiRequesterOptions;
  retry: RetrySettings;
  nowMs: () => number;
  random: () => number;
}

/** One `getJson` call, prepared once and shared by its attempts. */
interface PreparedRequest {
  path: string;
  url: URL;
  summary: RequestSummary;
  kind: CredentialKind;
  route: string;
  startedAt: number;
  requestOptions: RequestOptions;
}

async function credentialHeaders(
  options: ApiRequesterOptions,
  kind: CredentialKind,
  signal: AbortSignal | undefined,
): Promise<{ headers: Record<string, string>; bearer: string | null }> {
  if (kind === 'api-key') {
    if (!options.apiKey) throw new AuthenticationError('api-key', 'not_configured', null, {});
    return { headers: { 'x-api-key': options.apiKey.reveal() }, bearer: null };
  }
  if (!options.tokens) throw new AuthenticationError('bearer', 'oauth_not_configured', null, {});
  const bearer = await options.tokens.getAccessToken(signal);
  return { headers: { authorization: `Bearer ${bearer}` }, bearer };
}

/** Waits for the shared rate limit, sends once with `headers`, and classifies the response. */
async function sendWithHeaders(
  requester: Requester,
  request: PreparedRequest,
  headers: Record<string, string>,
): Promise<Classified> {
  const { nowMs, retry } = requester;
  const { limiter, metrics, transport } = requester.options;
  const { route, requestOptions, summary } = request;
  const waited = await limiter.acquire({
    priority: requestOptions.priority ?? 'normal',
    signal: requestOptions.signal,
    // Another process's 429 may have paused everyone for longer than this request has left.
    maxPauseMs: Math.max(0, retry.maxTotalMs - (nowMs() - request.startedAt)),
    // Counted against its stream by the claim itself (one Redis round trip, none after the slot).
    count: requester.options.ledger?.countOf(budgetStreamForPath(request.path)),
  });
  metrics.limiterWaited(waited);
  const started = nowMs();
  try {
    const response = await transport.send({
      method: 'GET',
      url: request.url,
      headers,
      signal: requestOptions.signal,
      summary,
    });
    metrics.requestCompleted({ route, method: 'GET', status: String(response.status) }, nowMs() - started);
    return classifyResponse(response, { credential: request.kind, request: summary, nowMs: nowMs() });
  } catch (error) {
    const status = error instanceof PartnerApiError ? error.name : 'error';
    metrics.requestCompleted({ route, method: 'GET', status }, nowMs() - started);
    throw error;
  }
}

async function attemptOnce(requester: Requester, request: PreparedRequest): Promise<unknown> {
  const { options } = requester;
  const signal = request.requestOptions.signal;
  const first = await notRetriedHere(credentialHeaders(options, request.kind, signal));
  let result = await sendWithHeaders(requester, request, first.headers);
  // An access token can be revoked or expire early; one forced refresh, then the answer stands.
  if (!result.ok && result.error instanceof AuthenticationError && first.bearer !== null && options.tokens) {
    options.logger.info({ route: request.route }, 'bearer token rejected; refreshing it once');
    const fresh = await notRetriedHere(options.tokens.refreshAfterRejection(first.bearer, signal));
    result = await sendWithHeaders(requester, request, { authorization: `Bearer ${fresh}` });
  }
  if (!result.ok) throw result.error;
  return result.json;
}

/**
 * A 429: every process pauses (at most RETRY_AFTER_MAX); this request sleeps it out only when the
 * wait is within the cap and within what is left of its time budget, else it fails now and a
 * later pass retries. Checked before sleeping, so no timer is ever set beyond the cap.
 */
async function waitOutRateLimit(
  requester: Requester,
  error: RateLimitedError,
  request: PreparedRequest,
): Promise<void> {
  const { retry, nowMs } = requester;
  const { limiter, logger, metrics } = requester.options;
  const { route } = request;
  if (error.retryAfterMs > retry.retryAfterMaxMs) {
    // Every process's passes stop at their next request, instead of each waiting the cap out.
    await limiter.pauseAll(retry.retryAfterMaxMs, { stopPasses: true });
    logger.warn(
      { route, retryAfterMs: error.retryAfterMs, capMs: retry.retryAfterMaxMs },
      'rate limited for longer than RETRY_AFTER_MAX; the pass stops and is retried later',
    );
    throw new RetryAfterTooLongError(error.retryAfterMs, retry.retryAfterMaxMs, {
      request: error.request,
      status: 429,
      cause: error,
    });
  }
  await limiter.pauseAll(error.retryAfterMs);
  const remaining = retry.maxTotalMs - (nowMs() - request.startedAt);
  if (error.retryAfterMs > remaining) throw error;
  logger.warn(
    { route, retryAfterMs: error.retryAfterMs },
    'rate limited by the partner API; every process pauses',
  );
  metrics.requestRetried({ route, reason: error.name });
  await sleep(error.retryAfterMs, undefined, { signal: request.requestOptions.signal });
}

/**
 * p-retry's own budget check would also stop 429s once the budget is spent, so it gets an
 * unbounded budget and this applies ours: 429s always (within maxTotalMs), others while retries
 * remain.
 */
function willRetry(retry: RetrySettings, error: Error, retriesConsumed: number): boolean {
  return (
    error instanceof PartnerApiError &&
    error.retryable &&
    (error instanceof RateLimitedError || retriesConsumed < retry.retries)
  );
}

/** Any other retryable failure: full-jitter backoff, never past the request's time budget. */
async function backOffBeforeRetry(
  requester: Requester,
  error: PartnerApiError,
  retriesConsumed: number,
  request: PreparedRequest,
): Promise<void> {
  const { retry, nowMs, random } = requester;
  const { route } = request;
  const remaining = retry.maxTotalMs - (nowMs() - request.startedAt);
  const delay = Math.min(remaining, fullJitterDelayMs(retriesConsumed, retry.backoff, random()));
  requester.options.logger.warn(
    { route, error: error.name, status: error.status, attempt: retriesConsumed + 1, delayMs: delay },
    'partner API request failed; retrying',
  );
  requester.options.metrics.requestRetried({ route, reason: error.name });
  if (delay > 0) await sleep(delay, undefined, { signal: request.requestOptions.signal });
}

function prepareRequest(
  requester: Requester,
  path: string,
  params: QueryParams,
  requestOptions: RequestOptions,
): PreparedRequest {
  const kind = credentialForPath(path);
  const url = buildUrl(requester.options.baseUrl, path, params);
  return {
    path,
    url,
    summary: summarizeRequest('GET', url),
    kind,
    route: routeTemplate(path),
    startedAt: requester.nowMs(),
    requestOptions,
  };
}

export function createApiRequester(options: ApiRequesterOptions): ApiRequester {
  const requester: Requester = {
    options,
    retry: { ...DEFAULT_RETRY_SETTINGS, ...options.retry },
    nowMs: options.nowMs ?? Date.now,
    random: options.random ?? Math.random,
  };
  const { retry } = requester;
  return {
    async getJson(path, params = {}, requestOptions = {}) {
      const request = prepareRequest(requester, path, params, requestOptions);
      return pRetry(() => attemptOnce(requester, request), {
        retries: Number.POSITIVE_INFINITY,
        maxRetryTime: retry.maxTotalMs,
        minTimeout: 0, // the waits happen in onFailedAttempt: full jitter, or exactly Retry-After
        factor: 1,
        signal: requestOptions.signal,
        shouldRetry: ({ error, retriesConsumed }) => willRetry(retry, error, retriesConsumed),
        shouldConsumeRetry: ({ error }) => !(error instanceof RateLimitedError),
        onFailedAttempt: async ({ error, retriesConsumed }) => {
          if (error instanceof RateLimitedError) {
            options.metrics.rateLimited({ route: request.route });
            await waitOutRateLimit(requester, error, request);
            return;
          }
          if (!willRetry(retry, error, retriesConsumed) || !(error instanceof PartnerApiError)) return;
          await backOffBeforeRetry(requester, error, retriesConsumed, request);
        },
      });
    },
  };
}
