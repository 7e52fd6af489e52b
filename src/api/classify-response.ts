import {
  AuthenticationError,
  InsufficientScopeError,
  InvalidJsonError,
  InvalidRequestError,
  RateLimitedError,
  RequestBlockedError,
  ResourceNotFoundError,
  RouteNotFoundError,
  ServerError,
  UnexpectedStatusError,
  type CredentialKind,
  type EnvelopeA,
  type PartnerApiError,
  type RequestSummary,
} from './errors.js';
import { parseRetryAfter } from './retry-policy.js';

// Pure: turns a response (status, headers, body text) into parsed JSON or a typed error. Branches on
// the status first, as the spec says, then on the body's envelope.

export type ResponseHeaders = Record<string, string | string[] | undefined>;

export interface RawResponse {
  status: number;
  headers: ResponseHeaders;
  body: string;
}

export interface ClassifyContext {
  credential: CredentialKind;
  request: RequestSummary;
  nowMs: number;
  /** When a 429 carries no readable Retry-After. */
  defaultRetryAfterMs?: number;
}

export type Classified = { ok: true; json: unknown } | { ok: false; error: PartnerApiError };

export function headerValue(headers: ResponseHeaders, name: string): string | null {
  const value = headers[name.toLowerCase()];
  if (Array.isArray(value)) return value[0] ?? null;
  return value ?? null;
}

function tryParseJson(body: string): { ok: true; value: unknown } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: JSON.parse(body) as unknown };
  } catch (error) {
    return { ok: false, error };
  }
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

export function readEnvelopeA(json: unknown): EnvelopeA | null {
  const error = asRecord(asRecord(json)?.['error']);
  if (!error || typeof error['code'] !== 'string') return null;
  return {
    type: typeof error['type'] === 'string' ? error['type'] : 'unknown',
    code: error['code'],
    message: typeof error['message'] === 'string' ? error['message'] : '',
    param: typeof error['param'] === 'string' ? error['param'] : null,
  };
}

/** Envelope C: the routing 404 (`error: EndpointNotFoundException`, `error_code: internal0007`). */
function readEnvelopeC(json: unknown): string | null {
  const body = asRecord(json);
  if (!body) return null;
  if (body['error'] === 'EndpointNotFoundException') return 'EndpointNotFoundException';
  if (typeof body['error_code'] === 'string' && typeof body['error'] === 'string') return body['error_code'];
  return null;
}

export function classifyResponse(response: RawResponse, context: ClassifyContext): Classified {
  const { status, headers, body } = response;
  const details = { request: context.request, status };
  const contentType = headerValue(headers, 'content-type');
  const isHtml = contentType !== null && /text\/html/i.test(contentType);
  const parsed = body.trim() === '' ? null : tryParseJson(body);
  const json = parsed?.ok ? parsed.value : undefined;
  const fail = (error: PartnerApiError): Classified => ({ ok: false, error });

  if (status >= 200 && status < 300) {
    if (parsed?.ok) return { ok: true, json: parsed.value };
    return fail(new InvalidJsonError({ ...details, cause: parsed?.error ?? new Error('empty body') }));
  }
  if (status === 429) {
    const retryAfterMs = parseRetryAfter(headerValue(headers, 'retry-after'), context.nowMs);
    return fail(new RateLimitedError(retryAfterMs ?? context.defaultRetryAfterMs ?? 1000, details));
  }
  if (status >= 500) return fail(new ServerError(contentType, details));

  const envelope = readEnvelopeA(json);
  const wwwAuthenticate = headerValue(headers, 'www-authenticate');
  switch (status) {
    case 400:
    case 422:
      return fail(envelope ? new InvalidRequestError(envelope, details) : new UnexpectedStatusError(details));
    case 401: {
      const legacyCode = asRecord(json)?.['error_code'];
      const code = envelope?.code ?? (typeof legacyCode === 'string' ? legacyCode : null);
      return fail(new AuthenticationError(context.credential, code, wwwAuthenticate, details));
    }
    case 403:
      if (isHtml) return fail(new RequestBlockedError(details));
      if (envelope?.code === 'insufficient_scope') {
        return fail(new InsufficientScopeError(context.credential, envelope.message, details));
      }
      if (wwwAuthenticate !== null && /insufficient_scope/.test(wwwAuthenticate)) {
        return fail(new InsufficientScopeError(context.credential, null, details));
      }
      return fail(new UnexpectedStatusError(details));
    case 404: {
      const routing = readEnvelopeC(json);
      if (routing !== null) return fail(new RouteNotFoundError(routing, details));
      if (envelope) return fail(new ResourceNotFoundError(envelope, details));
      return fail(new UnexpectedStatusError(details));
    }
    default:
      return fail(new UnexpectedStatusError(details));
  }
}
