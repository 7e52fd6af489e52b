import type { SimResponse } from './http-types.js';

export function jsonResponse(
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): SimResponse {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body: JSON.stringify(value),
  };
}

export function emptyResponse(status: number, headers: Record<string, string> = {}): SimResponse {
  return { status, headers, body: '' };
}

export function htmlResponse(
  status: number,
  html: string,
  headers: Record<string, string> = {},
): SimResponse {
  return { status, headers: { 'content-type': 'text/html; charset=utf-8', ...headers }, body: html };
}

export type EnvelopeAType =
  'invalid_request_error' | 'authentication_error' | 'authorization_error' | 'rate_limit_error';

/** Envelope A: validation errors, resource_not_found and the JSON 401/403 answers. */
export function envelopeA(status: number, type: EnvelopeAType, code: string, message: string): SimResponse {
  return jsonResponse(status, { error: { type, code, message, param: null } });
}

export const invalidParameter = (name: string, detail: string): SimResponse =>
  envelopeA(
    400,
    'invalid_request_error',
    'invalid_parameter',
    `Invalid value for parameter '${name}': ${detail}`,
  );

export const resourceNotFound = (what: string): SimResponse =>
  envelopeA(404, 'invalid_request_error', 'resource_not_found', `No such ${what}`);

/** Envelope C: the routing 404 for unknown paths, removed routes and version-prefix mistakes. */
export function envelopeC(nowMs: number, path: string): SimResponse {
  return jsonResponse(404, {
    status: 404,
    display_message: 'The requested resource could not be found.',
    message: `No endpoint ${path}`,
    error: 'EndpointNotFoundException',
    error_code: 'internal0007',
    timestamp: new Date(nowMs).toISOString(),
  });
}

export function gatewayErrorPage(status: number): SimResponse {
  return htmlResponse(
    status,
    `<!DOCTYPE html>\n<html><head><title>${status} Service Unavailable</title></head><body><h1>${status}</h1><p>The server is temporarily unable to service your request.</p></body></html>\n`,
  );
}

export function forbiddenPage(): SimResponse {
  return htmlResponse(
    403,
    '<!DOCTYPE html>\n<html><head><title>403 Forbidden</title></head><body><h1>403 Forbidden</h1><p>Request blocked.</p></body></html>\n',
  );
}
