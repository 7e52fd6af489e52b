import { createHash, timingSafeEqual } from 'node:crypto';
import type { SimContext } from '../context.js';
import type { Route, SimRequest, SimResponse } from '../http-types.js';
import { emptyResponse, jsonResponse } from '../responses.js';

const oauthError = (status: number, error: string, description?: string): SimResponse =>
  jsonResponse(status, description ? { error, error_description: description } : { error }, {
    'cache-control': 'no-store',
  });

const s256 = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url');

const sameSecret = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** OAuth 2.0 authorization code + PKCE (S256), single-use codes, refresh tokens rotated on every use. */
export function oauthRoutes(ctx: SimContext): Route[] {
  const { world, credentials, clock } = ctx;
  const app = world.app;

  const authorize = (request: SimRequest): SimResponse => {
    const q = request.query;
    // Never redirect to an unregistered URI: those errors are answered directly.
    if (q.get('client_id') !== app.clientId) return oauthError(400, 'invalid_request', 'unknown client_id');
    const redirectUri = q.get('redirect_uri') ?? '';
    if (!app.redirectUris.includes(redirectUri))
      return oauthError(400, 'invalid_request', 'redirect_uri does not exactly match a registered URI');
    const redirect = (params: Record<string, string>): SimResponse => {
      const target = new URL(redirectUri);
      for (const [k, v] of Object.entries(params)) target.searchParams.set(k, v);
      const state = q.get('state');
      if (state !== null) target.searchParams.set('state', state);
      return emptyResponse(302, { location: target.toString() });
    };
    if (q.get('response_type') !== 'code') return redirect({ error: 'unsupported_response_type' });
    const challenge = q.get('code_challenge') ?? '';
    if (q.get('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(challenge))
      return redirect({
        error: 'invalid_request',
        error_description: 'PKCE with code_challenge_method=S256 is required',
      });
    const scopes = (q.get('scope') ?? '').split(' ').filter((s) => s !== '');
    if (scopes.length === 0 || scopes.some((s) => !app.allowedScopes.includes(s)))
      return redirect({ error: 'invalid_scope' });
    // Consent is simulated: the default member approves, or the member named by login_hint.
    const hint = q.get('login_hint');
    const member = (hint === null ? undefined : world.index.memberById.get(hint)) ?? world.members[0];
    if (!member) return oauthError(500, 'server_error');
    const code = credentials.mintCode({
      memberId: member.id,
      clientId: app.clientId,
      redirectUri,
      scopes,
      codeChallenge: challenge,
    });
    return redirect({ code });
  };

  const token = async (request: SimRequest): Promise<SimResponse> => {
    const form = new URLSearchParams(request.body);
    let clientId = form.get('client_id');
    let clientSecret = form.get('client_secret');
    const basic = /^Basic\s+(.+)$/i.exec(String(request.headers['authorization'] ?? ''));
    if (basic?.[1]) {
      const [id, secret] = Buffer.from(basic[1], 'base64').toString('utf8').split(':');
      clientId = decodeURIComponent(id ?? '');
      clientSecret = decodeURIComponent(secret ?? '');
    }
    if (clientId !== app.clientId || !sameSecret(clientSecret ?? '', app.clientSecret))
      return { ...oauthError(401, 'invalid_client'), credential: 'client_secret' };
    const answer = (tokens: unknown): SimResponse => ({
      ...jsonResponse(200, tokens, { 'cache-control': 'no-store' }),
      credential: 'client_secret',
    });
    const grant = form.get('grant_type');
    if (grant === 'authorization_code') {
      const code = credentials.codes.get(form.get('code') ?? '');
      if (!code || code.used || code.expiresAtMs <= clock.nowMs()) return oauthError(400, 'invalid_grant');
      code.used = true; // single use, even when the rest of the request is wrong
      if (code.redirectUri !== form.get('redirect_uri'))
        return oauthError(400, 'invalid_grant', 'redirect_uri mismatch');
      const verifier = form.get('code_verifier') ?? '';
      if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier) || s256(verifier) !== code.codeChallenge)
        return oauthError(400, 'invalid_grant', 'code_verifier does not match');
      return answer(await credentials.issueTokens(code.memberId, code.clientId, code.scopes));
    }
    if (grant === 'refresh_token') {
      const presented = form.get('refresh_token') ?? '';
      const record = credentials.refreshTokens.get(presented);
      if (
        !record ||
        record.invalidated ||
        record.expiresAtMs <= clock.nowMs() ||
        record.clientId !== clientId
      )
        return oauthError(400, 'invalid_grant');
      record.invalidated = true; // rotation: the presented token is spent
      return answer(await credentials.issueTokens(record.memberId, record.clientId, record.scopes));
    }
    return oauthError(400, 'unsupported_grant_type');
  };

  return [
    { method: 'GET', pattern: /^\/oauth\/authorize$/, handler: authorize },
    { method: 'POST', pattern: /^\/oauth\/token$/, handler: token },
  ];
}
