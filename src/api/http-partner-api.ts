import type { RedisClient } from '../redis/connection.js';
import type { Config, OAuthConfig } from '../config/config.js';
import type { Logger } from '../log.js';
import {
  createApiRequester,
  type ApiRequester,
  type QueryParams,
  type RetrySettings,
} from './api-requester.js';
import { ResourceNotFoundError, UnexpectedResponseShapeError } from './errors.js';
import { createHttpTransport, transportOptionsFrom, type HttpTransport } from './http-transport.js';
import { noopApiMetrics, type ApiMetrics } from './metrics.js';
import { OAuthTokenManager } from './oauth/token-manager.js';
import { createTokenEndpoint, type TokenEndpoint } from './oauth/token-endpoint.js';
import { memberTokenRow } from './oauth/member-connection.js';
import type { TokenStore } from './oauth/token-store.js';
import { pageStream, type Page, type PageStream } from './paging.js';
import type { CallOptions, PageOptions, PartnerApi } from './partner-api.js';
import {
  parseAccountBalance,
  parseChallengePage,
  parseFeedCheckInPage,
  parseMemberCheckInPage,
  parseMembershipPage,
  parseMemberStatus,
  parseOpenHours,
  parsePaymentIntent,
  parsePaymentIntentPage,
  parseReducedLocation,
  parseRestaurantPage,
  parseUser,
  parseUserTagList,
  parseWalletList,
  type PageResult,
} from '../records/index.js';
import { createSharedRateLimiter, type SharedRateLimiter } from './shared-rate-limiter.js';
import { createSpendLedger } from './spend-ledger.js';
import type { BudgetStream } from '../sync/budget-allocation.js';

export interface HttpPartnerApiOptions {
  requester: ApiRequester;
  pageSize: number;
  close?: () => Promise<void>;
}

function toPage<T>(result: PageResult<T>, path: string): Page<T> {
  if (!result.ok) throw new UnexpectedResponseShapeError(`${path}: ${result.reason}`, {});
  return {
    records: result.records,
    rejections: result.rejections,
    pagination: result.pagination,
    ...(result.drift.length > 0 ? { drift: result.drift } : {}),
  };
}

async function nullIfNotFound<T>(call: Promise<T>): Promise<T | null> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof ResourceNotFoundError) return null;
    throw error;
  }
}

/** The HTTP implementation of PartnerApi over one ApiRequester. */
export function createHttpPartnerApi(options: HttpPartnerApiOptions): PartnerApi {
  const { requester } = options;
  const get = (path: string, params: QueryParams, call: CallOptions = {}) =>
    requester.getJson(path, params, { signal: call.signal, priority: call.priority ?? 'normal' });

  function pages<T>(
    path: string,
    params: QueryParams,
    parse: (raw: unknown) => PageResult<T>,
    paging: PageOptions = {},
  ): PageStream<T> {
    const pageSize = paging.pageSize ?? options.pageSize;
    return pageStream(
      async (page) => toPage(parse(await get(path, { ...params, page, page_size: pageSize }, paging)), path),
      paging.startPage ?? 0,
    );
  }

  const windowParams = (q: { createdAfter: Date; createdBefore: Date }) => ({
    created_after: q.createdAfter.toISOString(),
    created_before: q.createdBefore.toISOString(),
  });

  return {
    checkInPages: (query) => pages('/check_ins', windowParams(query), parseFeedCheckInPage, query),
    async countCheckIns(query) {
      const raw = await get('/check_ins', { ...windowParams(query), page: 0, page_size: 1 }, query);
      return toPage(parseFeedCheckInPage(raw), '/check_ins').pagination.totalCount;
    },
    restaurantPages: (paging) => pages('/restaurants', {}, parseRestaurantPage, paging),
    getLocation: (id, call) =>
      nullIfNotFound(
        get(`/locations/${encodeURIComponent(id)}`, {}, call).then((raw) => parseReducedLocation(raw)),
      ),
    getLocationOpenHours: (id, call) =>
      nullIfNotFound(
        get(`/locations/${encodeURIComponent(id)}/open_hours`, {}, call).then((raw) => parseOpenHours(raw)),
      ),
    challengePages: (restaurantId, paging) =>
      pages('/challenges', { restaurant: restaurantId }, parseChallengePage, paging),
    getBalance: async (call) => parseAccountBalance(await get('/balance', {}, call)),
    paymentIntentPages: (paging = {}) =>
      pages('/payment_intents', { payee_account_balance_id: paging.payee }, parsePaymentIntentPage, paging),
    getPaymentIntent: (id, call) =>
      nullIfNotFound(
        get(`/payment_intents/${encodeURIComponent(id)}`, {}, call).then((raw) => parsePaymentIntent(raw)),
      ),
    getMe: async (call) => parseUser(await get('/users/me', {}, call)),
    getMyStatus: (call) =>
      nullIfNotFound(get('/users/me/status', {}, call).then((raw) => parseMemberStatus(raw))),
    getMyWallets: async (call) => parseWalletList(await get('/users/me/wallets', {}, call)),
    getMyTags: async (call) => parseUserTagList(await get('/users/me/tags', {}, call)),
    myCheckInPages: (paging) => pages('/users/me/check_ins', {}, parseMemberCheckInPage, paging),
    myMembershipPages: (paging = {}) =>
      pages('/users/me/memberships', { restaurant: paging.restaurant }, parseMembershipPage, paging),
    close: async () => {
      await options.close?.();
    },
  };
}

export interface CreatePartnerApiOptions {
  config: Config;
  /** Shared rate limit and 429 pause live here, under config.redisPrefix. */
  redis: RedisClient;
  /** Holds the OAuth token rows (src/warehouse/oauth-tokens.ts: createTokenStore). */
  tokenStore: TokenStore;
  logger: Logger;
  metrics?: ApiMetrics;
  /** Tuning for tests and tools; production uses the defaults. */
  retry?: Partial<RetrySettings>;
  afterRefreshCommitted?: (() => void | Promise<void>) | undefined;
  /** The pipeline's clock (Postgres's): token expiries are compared with it, not with this host's. */
  nowMs?: (() => number) | undefined;
}

export interface PartnerApiParts {
  api: PartnerApi;
  requester: ApiRequester;
  transport: HttpTransport;
  limiter: SharedRateLimiter;
  tokens: OAuthTokenManager | undefined;
}

/**
 * What every partner-API client of a process shares: one keep-alive transport, the Redis-shared
 * rate limiter, and a requester factory for a given bearer-token source.
 */
function sharedApiPieces(options: CreatePartnerApiOptions) {
  const { config, redis } = options;
  const logger = options.logger.child({ component: 'partner-api' });
  const metrics = options.metrics ?? noopApiMetrics;
  const baseUrl = config.api.baseUrl;
  if (baseUrl === undefined) throw new Error('SVC_API_BASE_URL is required to talk to the partner API');
  const transport = createHttpTransport(transportOptionsFrom(config.api));
  const limiter = createSharedRateLimiter({
    redis,
    prefix: config.redisPrefix,
    rps: config.api.rateLimitRps,
  });
  // Buckets by the pipeline's clock, so that every host files a request under the same minute.
  const ledger = createSpendLedger({
    redis,
    prefix: config.redisPrefix,
    ...(options.nowMs === undefined ? {} : { nowMs: options.nowMs }),
  });
  const tokenEndpointFor = (oauth: OAuthConfig, spendsOn: BudgetStream = 'oauth') =>
    createTokenEndpoint({
      oauth,
      transport,
      limiter,
      ledger,
      spendsOn,
      retryAfterMaxMs: config.api.retryAfterMaxMs,
    });
  const requesterWith = (tokens: OAuthTokenManager | undefined) =>
    createApiRequester({
      baseUrl,
      apiKey: config.api.apiKey,
      tokens,
      transport,
      limiter,
      ledger,
      logger,
      metrics,
      retry: { retryAfterMaxMs: config.api.retryAfterMaxMs, ...options.retry },
    });
  return { logger, metrics, transport, limiter, tokenEndpointFor, requesterWith };
}

/** Wires transport, shared limiter, token manager and requester from the config. */
export function createPartnerApiParts(options: CreatePartnerApiOptions): PartnerApiParts {
  const { config, tokenStore } = options;
  const { logger, metrics, transport, limiter, tokenEndpointFor, requesterWith } = sharedApiPieces(options);
  const oauth = config.oauth;
  const tokens =
    oauth === undefined
      ? undefined
      : new OAuthTokenManager({
          store: tokenStore,
          endpoint: tokenEndpointFor(oauth),
          encryptionKey: oauth.encryptionKey.reveal(),
          initialRefreshToken: oauth.refreshToken?.reveal(),
          logger,
          metrics,
          afterRefreshCommitted: options.afterRefreshCommitted,
          ...(options.nowMs === undefined ? {} : { nowMs: options.nowMs }),
        });
  const requester = requesterWith(tokens);
  const api = createHttpPartnerApi({
    requester,
    pageSize: config.api.pageSize,
    close: () => transport.close(),
  });
  return { api, requester, transport, limiter, tokens };
}

export function createPartnerApi(options: CreatePartnerApiOptions): PartnerApi {
  return createPartnerApiParts(options).api;
}

/** Partner-API clients for connected members: one transport and shared limiter, a token row each. */
export interface MemberApis {
  /**
   * A client whose bearer routes use the member's own tokens (row `member:<id>`); `onRefreshed`
   * runs after each refresh of them is committed (the members pass counts it as a request).
   */
  forMember(memberId: string, hooks?: { onRefreshed?: () => void }): PartnerApi;
  /** The token endpoint, for `members connect` and `members import`. */
  tokenEndpoint: TokenEndpoint;
  close(): Promise<void>;
}

export function createMemberApis(options: CreatePartnerApiOptions): MemberApis {
  const { config, tokenStore } = options;
  const oauth = config.oauth;
  if (oauth === undefined) throw new Error('member connections need SVC_OAUTH_CLIENT_ID and its settings');
  const { logger, metrics, transport, tokenEndpointFor, requesterWith } = sharedApiPieces(options);
  // A member's refresh is spent as part of reading that member (docs/rate-limit.md, "One budget").
  const tokenEndpoint = tokenEndpointFor(oauth, 'members');
  return {
    tokenEndpoint,
    forMember(memberId, hooks = {}) {
      const tokens = new OAuthTokenManager({
        store: tokenStore,
        endpoint: tokenEndpoint,
        encryptionKey: oauth.encryptionKey.reveal(),
        rowId: memberTokenRow(memberId),
        logger: logger.child({ memberId }),
        metrics,
        afterRefreshCommitted: hooks.onRefreshed,
        ...(options.nowMs === undefined ? {} : { nowMs: options.nowMs }),
      });
      return createHttpPartnerApi({ requester: requesterWith(tokens), pageSize: config.api.pageSize });
    },
    close: () => transport.close(),
  };
}
