import formatBytes from 'bytes';

// Typed errors at the partner-API boundary. Each has a stable `name` that says what happened,
// `retryable` that says whether the same request may succeed later, the request summarized without
// its credentials, and the underlying `cause`. Messages never carry a credential: credentials travel
// in headers, and the summary keeps only method, URL (no userinfo) and query parameters.

/** The request as it may be logged: never headers, never a body. */
export interface RequestSummary {
  method: string;
  url: string;
  params: Record<string, string>;
}

interface ErrorDetails {
  request?: RequestSummary | undefined;
  status?: number | undefined;
  cause?: unknown;
}

export abstract class PartnerApiError extends Error {
  abstract override readonly name: string;
  abstract readonly retryable: boolean;
  readonly request: RequestSummary | undefined;
  readonly status: number | undefined;

  constructor(message: string, details: ErrorDetails = {}) {
    super(
      details.request ? `${message} (${details.request.method} ${details.request.url})` : message,
      details.cause === undefined ? undefined : { cause: details.cause },
    );
    this.request = details.request;
    this.status = details.status;
  }
}

/** Envelope A: `{ error: { type, code, message, param } }`. */
export interface EnvelopeA {
  type: string;
  code: string;
  message: string;
  param: string | null;
}

/** 400 envelope A (`invalid_request_error`, `invalid_parameter`, `payment0030`, `paymentIntent0003`, …). */
export class InvalidRequestError extends PartnerApiError {
  override readonly name = 'InvalidRequestError';
  readonly retryable = false;
  constructor(
    readonly envelope: EnvelopeA,
    details: ErrorDetails,
  ) {
    super(`the partner API rejected the request: ${envelope.code}: ${envelope.message}`, details);
  }
  get code(): string {
    return this.envelope.code;
  }
}

/** 404 envelope A `resource_not_found`: the route exists, the record does not. */
export class ResourceNotFoundError extends PartnerApiError {
  override readonly name = 'ResourceNotFoundError';
  readonly retryable = false;
  constructor(
    readonly envelope: EnvelopeA,
    details: ErrorDetails,
  ) {
    super(`resource not found: ${envelope.message}`, details);
  }
}

/** 404 envelope C (`EndpointNotFoundException`, `internal0007`): the route itself does not exist. */
export class RouteNotFoundError extends PartnerApiError {
  override readonly name = 'RouteNotFoundError';
  readonly retryable = false;
  constructor(
    readonly errorCode: string,
    details: ErrorDetails,
  ) {
    super(`the partner API has no such route (${errorCode}); check SVC_API_BASE_URL ends in /v1`, details);
  }
}

export type CredentialKind = 'api-key' | 'bearer';

/**
 * 401: the empty-body form (`WWW-Authenticate: Bearer`, missing or bad credential) or envelope A
 * `invalid_api_key` (key expired or revoked).
 */
export class AuthenticationError extends PartnerApiError {
  override readonly name = 'AuthenticationError';
  readonly retryable = false;
  constructor(
    readonly credential: CredentialKind,
    readonly code: string | null,
    readonly wwwAuthenticate: string | null,
    details: ErrorDetails,
  ) {
    super(
      credential === 'api-key'
        ? `the partner API refused the API key${code ? ` (${code})` : ''}; check SVC_API_KEY`
        : `the partner API refused the bearer token${wwwAuthenticate ? ` (${wwwAuthenticate})` : ''}`,
      details,
    );
  }
}

/** 403 `insufficient_scope`: envelope A for API keys, empty body with `WWW-Authenticate` for bearers. */
export class InsufficientScopeError extends PartnerApiError {
  override readonly name = 'InsufficientScopeError';
  readonly retryable = false;
  constructor(
    readonly credential: CredentialKind,
    readonly detail: string | null,
    details: ErrorDetails,
  ) {
    super(
      `the ${credential === 'api-key' ? 'API key' : 'bearer token'} lacks a required scope${detail ? `: ${detail}` : ''}`,
      details,
    );
  }
}

/** 403 with an HTML page: the partner's edge blocks requests without a non-empty User-Agent. */
export class RequestBlockedError extends PartnerApiError {
  override readonly name = 'RequestBlockedError';
  readonly retryable = false;
  constructor(details: ErrorDetails) {
    super('the partner API blocked the request (403 HTML page; is SVC_USER_AGENT empty?)', details);
  }
}

/** 429. Retrying is right, after exactly `retryAfterMs`. */
export class RateLimitedError extends PartnerApiError {
  override readonly name = 'RateLimitedError';
  readonly retryable = true;
  constructor(
    readonly retryAfterMs: number,
    details: ErrorDetails,
  ) {
    super(`rate limited by the partner API; retry after ${retryAfterMs} ms`, details);
  }
}

/**
 * A 429 whose Retry-After is longer than RETRY_AFTER_MAX. Every process pauses for the cap, and the
 * pass fails with this error instead of sleeping: the next scheduled pass (or the window's stored
 * retry) tries again later. Retryable later, never by waiting inside the request.
 */
export class RetryAfterTooLongError extends PartnerApiError {
  override readonly name = 'RetryAfterTooLongError';
  readonly retryable = true;
  constructor(
    readonly retryAfterMs: number,
    readonly capMs: number,
    details: ErrorDetails,
  ) {
    super(
      `rate limited by the partner API for ${Math.round(retryAfterMs / 1000)} s, longer than RETRY_AFTER_MAX ` +
        `(${Math.round(capMs / 1000)} s): this pass stops; every process pauses for ${Math.round(capMs / 1000)} s ` +
        'and a later pass tries again',
      details,
    );
  }
}

/**
 * The server keeps saying there is a next page past every page its own totals allow (empty pages
 * with next_page = page + 1, or the same page again and again): stopped instead of looping.
 */
export class PagingOverrunError extends PartnerApiError {
  override readonly name = 'PagingOverrunError';
  readonly retryable = false;
  constructor(pagesRead: number, allowed: number, details: ErrorDetails = {}) {
    super(
      `paging did not end: ${pagesRead} pages read, more than the ${allowed} that total_count and ` +
        'total_pages allow (the API keeps answering a next_page); stopped, nothing was deleted',
      details,
    );
  }
}

/** 5xx, JSON or HTML body. */
export class ServerError extends PartnerApiError {
  override readonly name = 'ServerError';
  readonly retryable = true;
  constructor(
    readonly contentType: string | null,
    details: ErrorDetails,
  ) {
    super(`the partner API failed with ${details.status ?? '5xx'}`, details);
  }
}

/** A status we have no rule for (another 4xx). */
export class UnexpectedStatusError extends PartnerApiError {
  override readonly name = 'UnexpectedStatusError';
  readonly retryable = false;
  constructor(details: ErrorDetails) {
    super(`unexpected status ${details.status ?? '?'} from the partner API`, details);
  }
}

/** Connection refused or reset, DNS failure, socket closed mid-response. */
export class NetworkError extends PartnerApiError {
  override readonly name = 'NetworkError';
  readonly retryable = true;
  constructor(
    readonly code: string | null,
    details: ErrorDetails,
  ) {
    super(`network error talking to the partner API${code ? ` (${code})` : ''}`, details);
  }
}

/** Connect, headers or body timeout (config.api.requestTimeoutMs). */
export class RequestTimeoutError extends PartnerApiError {
  override readonly name = 'RequestTimeoutError';
  readonly retryable = true;
  constructor(
    /** `total`: the whole attempt outlived the timeout. */
    readonly phase: 'connect' | 'headers' | 'body' | 'total',
    details: ErrorDetails,
  ) {
    super(`the partner API did not answer in time (${phase} timeout)`, details);
  }
}

/** A 2xx whose body is not JSON (e.g. truncated): a fresh attempt usually gets the whole body. */
export class InvalidJsonError extends PartnerApiError {
  override readonly name = 'InvalidJsonError';
  readonly retryable = true;
  constructor(details: ErrorDetails) {
    super('the partner API answered with a body that is not valid JSON (truncated?)', details);
  }
}

/**
 * The body grew past SVC_MAX_RESPONSE_SIZE and was abandoned unread. Not retried at once: the same
 * page would be as large again; the window's stored backoff tries later.
 */
export class ResponseTooLargeError extends PartnerApiError {
  override readonly name = 'ResponseTooLargeError';
  readonly retryable = false;
  constructor(
    readonly limitBytes: number,
    details: ErrorDetails,
  ) {
    super(
      `the partner API answered with a body larger than ${formatBytes(limitBytes)} (SVC_MAX_RESPONSE_SIZE); lower SVC_PAGE_SIZE or raise the limit`,
      details,
    );
  }
}

/** Valid JSON in a shape we cannot use (e.g. no `pagination`): retrying would give the same. */
export class UnexpectedResponseShapeError extends PartnerApiError {
  override readonly name = 'UnexpectedResponseShapeError';
  readonly retryable = false;
  constructor(
    readonly reason: string,
    details: ErrorDetails,
  ) {
    super(`unexpected response shape from the partner API: ${reason}`, details);
  }
}

// ---- OAuth ----

/** The stored refresh token was rejected (`invalid_grant`): revoked, expired or already rotated. */
export class RefreshTokenRevokedError extends PartnerApiError {
  override readonly name = 'RefreshTokenRevokedError';
  readonly retryable = false;
  constructor(details: ErrorDetails = {}) {
    super(
      'the OAuth refresh token was rejected (invalid_grant: revoked, expired or already used); ' +
        'run `rewards-etl auth url` then `rewards-etl auth exchange`, or `rewards-etl auth import`',
      details,
    );
  }
}

/** No refresh token in the store and none in SVC_OAUTH_REFRESH_TOKEN. */
export class OAuthNotAuthorizedError extends PartnerApiError {
  override readonly name = 'OAuthNotAuthorizedError';
  readonly retryable = false;
  constructor(reason: string) {
    super(`${reason}; run \`rewards-etl auth\` (url + exchange, or import) or set SVC_OAUTH_REFRESH_TOKEN`);
  }
}

/** The token endpoint failed in another way (5xx, network, unexpected answer). */
export class TokenEndpointError extends PartnerApiError {
  override readonly name = 'TokenEndpointError';
  readonly retryable: boolean;
  constructor(
    readonly code: string | null,
    retryable: boolean,
    details: ErrorDetails,
  ) {
    super(`the OAuth token endpoint failed${code ? ` (${code})` : ''}`, details);
    this.retryable = retryable;
  }
}

export function isRetryable(error: unknown): boolean {
  return error instanceof PartnerApiError && error.retryable;
}
