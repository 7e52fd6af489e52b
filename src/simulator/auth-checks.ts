import type { BearerClaims, CredentialStore } from './credentials.js';
import type { SimRequest, SimResponse } from './http-types.js';
import { emptyResponse, envelopeA } from './responses.js';

/** The behaviour-summary table of the spec's Authentication section, one function per credential. */

export type AuthResult<T> = { ok: true; value: T } | { ok: false; response: SimResponse };

const header = (request: SimRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** Missing key: empty 401 with `WWW-Authenticate: Bearer`. Unknown/revoked: envelope A invalid_api_key. */
export function requireApiKey(
  credentials: CredentialStore,
  request: SimRequest,
  scope: string | null,
): AuthResult<{ key: string }> {
  const key = header(request, 'x-api-key');
  if (key === undefined || key === '')
    return {
      ok: false,
      response: { ...emptyResponse(401, { 'www-authenticate': 'Bearer' }), credential: 'none' },
    };
  const record = credentials.apiKeys.get(key);
  if (!record || record.revoked)
    return {
      ok: false,
      response: {
        ...envelopeA(
          401,
          'authentication_error',
          'invalid_api_key',
          'The API key is invalid, expired or revoked.',
        ),
        credential: 'api_key',
      },
    };
  if (scope !== null && !record.scopes.includes(scope))
    return {
      ok: false,
      response: {
        ...envelopeA(
          403,
          'authorization_error',
          'insufficient_scope',
          `The API key lacks the required scope '${scope}'.`,
        ),
        credential: 'api_key',
      },
    };
  return { ok: true, value: { key } };
}

/**
 * Missing bearer (an API key does not count): empty 401 `WWW-Authenticate: Bearer`. Bad or expired JWT:
 * `Bearer error="invalid_token"`. Valid token lacking the scope: empty 403 `error="insufficient_scope"`.
 */
export async function requireBearer(
  credentials: CredentialStore,
  request: SimRequest,
  scope: string | null,
  memberExists: (id: string) => boolean,
): Promise<AuthResult<BearerClaims>> {
  const authorization = header(request, 'authorization');
  const match = authorization ? /^Bearer\s+(\S+)$/i.exec(authorization) : null;
  const kind = header(request, 'x-api-key') ? 'api_key' : 'none';
  if (!authorization)
    return {
      ok: false,
      response: { ...emptyResponse(401, { 'www-authenticate': 'Bearer' }), credential: kind },
    };
  const invalid: SimResponse = {
    ...emptyResponse(401, { 'www-authenticate': 'Bearer error="invalid_token"' }),
    credential: 'bearer',
  };
  if (!match?.[1]) return { ok: false, response: invalid };
  const claims = await credentials.verifyAccessToken(match[1]);
  if (!claims || !memberExists(claims.memberId)) return { ok: false, response: invalid };
  if (scope !== null && !claims.scopes.includes(scope))
    return {
      ok: false,
      response: {
        ...emptyResponse(403, { 'www-authenticate': 'Bearer error="insufficient_scope"' }),
        credential: 'bearer',
      },
    };
  return { ok: true, value: claims };
}
