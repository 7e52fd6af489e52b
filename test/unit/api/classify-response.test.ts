import { describe, expect, it } from 'vitest';
import { classifyResponse, type RawResponse } from '../../../src/api/classify-response.js';
import type { CredentialKind } from '../../../src/api/errors.js';

const request = { method: 'GET', url: 'https://api.example.test/v1/check_ins', params: { page: '0' } };
const NOW = Date.parse('2026-01-01T00:00:00Z');

function classify(
  response: Partial<RawResponse> & { status: number },
  credential: CredentialKind = 'api-key',
) {
  return classifyResponse({ headers: {}, body: '', ...response }, { credential, request, nowMs: NOW });
}

function errorOf(
  response: Partial<RawResponse> & { status: number },
  credential: CredentialKind = 'api-key',
) {
  const result = classify(response, credential);
  if (result.ok) throw new Error('expected an error');
  return result.error;
}

const json = { 'content-type': 'application/json' };
const envelopeA = (status: number, type: string, code: string, message = 'm') => ({
  status,
  headers: json,
  body: JSON.stringify({ error: { type, code, message, param: null } }),
});

describe('classifyResponse: branch on the status first, then the envelope', () => {
  it('returns the parsed JSON of a 2xx', () => {
    expect(classify({ status: 200, body: '{"a":1}' })).toEqual({ ok: true, json: { a: 1 } });
  });

  it.each([
    [
      '400 envelope A',
      envelopeA(400, 'invalid_request_error', 'invalid_parameter'),
      'InvalidRequestError',
      false,
    ],
    [
      '404 envelope A resource_not_found',
      envelopeA(404, 'invalid_request_error', 'resource_not_found'),
      'ResourceNotFoundError',
      false,
    ],
    [
      '404 envelope C',
      {
        status: 404,
        headers: json,
        body: JSON.stringify({
          status: 404,
          display_message: 'x',
          message: 'x',
          error: 'EndpointNotFoundException',
          error_code: 'internal0007',
          timestamp: 'x',
        }),
      },
      'RouteNotFoundError',
      false,
    ],
    [
      '401 invalid_api_key',
      envelopeA(401, 'authentication_error', 'invalid_api_key'),
      'AuthenticationError',
      false,
    ],
    [
      '401 empty body',
      { status: 401, headers: { 'www-authenticate': 'Bearer' } },
      'AuthenticationError',
      false,
    ],
    [
      '403 insufficient_scope JSON',
      envelopeA(403, 'authorization_error', 'insufficient_scope', "lacks 'read:checkins'"),
      'InsufficientScopeError',
      false,
    ],
    [
      '403 insufficient_scope empty bearer form',
      { status: 403, headers: { 'www-authenticate': 'Bearer error="insufficient_scope"' } },
      'InsufficientScopeError',
      false,
    ],
    [
      '403 HTML page',
      { status: 403, headers: { 'content-type': 'text/html' }, body: '<html>403</html>' },
      'RequestBlockedError',
      false,
    ],
    ['429', { status: 429, headers: { 'retry-after': '3' } }, 'RateLimitedError', true],
    [
      '502 HTML',
      { status: 502, headers: { 'content-type': 'text/html' }, body: '<html>502</html>' },
      'ServerError',
      true,
    ],
    ['500 JSON', { status: 500, headers: json, body: '{"error":"x"}' }, 'ServerError', true],
    [
      '200 truncated JSON',
      { status: 200, headers: json, body: '{"check_ins":[{"id":' },
      'InvalidJsonError',
      true,
    ],
    ['418', { status: 418 }, 'UnexpectedStatusError', false],
  ])('%s', (_label, response, name, retryable) => {
    const error = errorOf(response);
    expect(error.name).toBe(name);
    expect(error.retryable).toBe(retryable);
    expect(error.request).toEqual(request);
    expect(error.status).toBe(response.status);
  });

  it('keeps the envelope code and the scope message', () => {
    const error = errorOf(
      envelopeA(403, 'authorization_error', 'insufficient_scope', "lacks 'read:checkins'"),
    );
    expect(error.message).toContain('read:checkins');
    const invalid = errorOf(envelopeA(400, 'invalid_request_error', 'payment0030'));
    expect((invalid as unknown as { code: string }).code).toBe('payment0030');
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(errorOf({ status: 429, headers: { 'retry-after': '7' } })).toMatchObject({ retryAfterMs: 7000 });
    const date = new Date(NOW + 4000).toUTCString();
    expect(errorOf({ status: 429, headers: { 'retry-after': date } })).toMatchObject({ retryAfterMs: 4000 });
  });

  it('names the credential that was refused', () => {
    expect(
      errorOf({ status: 401, headers: { 'www-authenticate': 'Bearer error="invalid_token"' } }, 'bearer'),
    ).toMatchObject({
      credential: 'bearer',
      wwwAuthenticate: 'Bearer error="invalid_token"',
    });
  });

  it('keeps the JSON parse failure as the cause of InvalidJsonError', () => {
    expect(errorOf({ status: 200, body: '{' }).cause).toBeInstanceOf(SyntaxError);
  });
});
