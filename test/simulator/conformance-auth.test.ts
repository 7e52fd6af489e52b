import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import {
  ANCHOR,
  authorize,
  call,
  pkcePair,
  refresh,
  startFixedSimulator,
  tokenRequest,
} from './sim-fixture.js';

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await startFixedSimulator();
});
afterAll(() => sim.close());

const expectEnvelopeA = (res: { json: any }, type: string, code: string) =>
  expect(res.json).toEqual({ error: { type, code, message: expect.any(String), param: null } });

describe('auth behaviour summary', () => {
  test('bearer route, token missing: 401 empty body, WWW-Authenticate: Bearer', async () => {
    const res = await call(sim, '/users/me');
    expect(res.status).toBe(401);
    expect(res.text).toBe('');
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  test('bearer route, malformed token: 401 empty body, error="invalid_token"', async () => {
    const res = await call(sim, '/users/me', { bearer: 'not.a.jwt' });
    expect(res.status).toBe(401);
    expect(res.text).toBe('');
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });

  test('bearer route, expired token: 401 invalid_token once the simulator clock passes exp (60 min)', async () => {
    const token = await sim.control.credentials.accessToken();
    expect((await call(sim, '/users/me', { bearer: token })).status).toBe(200);
    sim.control.clock.advance(61 * 60_000);
    try {
      const res = await call(sim, '/users/me', { bearer: token });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    } finally {
      sim.control.clock.set(ANCHOR);
    }
  });

  test('bearer route, API key sent instead: same empty-body 401', async () => {
    const res = await call(sim, '/users/me', { apiKey: sim.credentials.apiKey });
    expect(res.status).toBe(401);
    expect(res.text).toBe('');
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  test('/users/me/check_ins with an API key: 401 as for a missing bearer', async () => {
    const res = await call(sim, '/users/me/check_ins', { apiKey: sim.credentials.apiKey });
    expect(res.status).toBe(401);
    expect(res.text).toBe('');
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  test('payment intents without a valid bearer: empty-body 401', async () => {
    const res = await call(sim, '/payment_intents', { apiKey: sim.credentials.apiKey });
    expect(res.status).toBe(401);
    expect(res.text).toBe('');
  });

  test('valid bearer lacking scope: 403 empty body, error="insufficient_scope"', async () => {
    const token = await sim.control.credentials.accessToken({ scopes: ['read:profile'] });
    const res = await call(sim, '/users/me/wallets', { bearer: token });
    expect(res.status).toBe(403);
    expect(res.text).toBe('');
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope"');
  });

  test('API-key route, key missing: 401 empty body, WWW-Authenticate: Bearer', async () => {
    const res = await call(sim, '/restaurants');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  test('API-key route, key revoked: 401 envelope A authentication_error invalid_api_key', async () => {
    const key = sim.control.credentials.mintApiKey(['read:checkins']);
    expect((await call(sim, '/restaurants', { apiKey: key })).status).toBe(200);
    sim.control.credentials.revokeApiKey(key);
    const res = await call(sim, '/restaurants', { apiKey: key });
    expect(res.status).toBe(401);
    expectEnvelopeA(res, 'authentication_error', 'invalid_api_key');
  });

  test('API-key route, unknown key: 401 envelope A invalid_api_key', async () => {
    const res = await call(sim, '/check_ins', { apiKey: 'sk_test_' + 'x'.repeat(32) });
    expect(res.status).toBe(401);
    expectEnvelopeA(res, 'authentication_error', 'invalid_api_key');
  });

  test('API key lacking read:checkins on the feed: 403 envelope A insufficient_scope naming the scope', async () => {
    const res = await call(sim, '/check_ins', { apiKey: sim.credentials.apiKeyNoScopes });
    expect(res.status).toBe(403);
    expectEnvelopeA(res, 'authorization_error', 'insufficient_scope');
    expect(res.json.error.message).toContain('read:checkins');
  });

  test('API key lacking read:restaurant_challenges on /challenges: 403 envelope A', async () => {
    const res = await call(sim, '/challenges?restaurant=00000000-0000-4000-8000-000000000000', {
      apiKey: sim.credentials.apiKeyNoScopes,
    });
    expect(res.status).toBe(403);
    expect(res.json.error.message).toContain('read:restaurant_challenges');
  });

  test('API key lacking read:balance on /balance: 403 envelope A', async () => {
    const res = await call(sim, '/balance', { apiKey: sim.credentials.apiKeyNoScopes });
    expect(res.status).toBe(403);
    expect(res.json.error.message).toContain('read:balance');
  });

  test('discovery needs a key but no scope', async () => {
    expect((await call(sim, '/restaurants', { apiKey: sim.credentials.apiKeyNoScopes })).status).toBe(200);
  });

  test('API key format: 40 characters with a test prefix', () => {
    expect(sim.credentials.apiKey).toMatch(/^sk_test_[A-Za-z0-9]{32}$/);
    expect(sim.credentials.apiKey).toHaveLength(40);
  });
});

describe('OAuth', () => {
  const scope = 'read:profile read:wallets';
  const start = (challenge: string, extra: Record<string, string> = {}) =>
    authorize(sim, {
      response_type: 'code',
      client_id: sim.credentials.clientId,
      redirect_uri: sim.credentials.redirectUri,
      scope,
      state: 'xyz-state',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...extra,
    });
  const exchange = (code: string, verifier: string) =>
    tokenRequest(sim, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: sim.credentials.redirectUri,
      client_id: sim.credentials.clientId,
      client_secret: sim.credentials.clientSecret,
      code_verifier: verifier,
    });

  test('authorize: redirects to the registered URI with code and state', async () => {
    const { challenge } = pkcePair();
    const res = await start(challenge);
    expect(res.status).toBe(302);
    const location = new URL(res.location!);
    expect(`${location.origin}${location.pathname}`).toBe(sim.credentials.redirectUri);
    expect(location.searchParams.get('state')).toBe('xyz-state');
    expect(location.searchParams.get('code')).toBeTruthy();
  });

  test('authorize: redirect URI must match exactly', async () => {
    const res = await start(pkcePair().challenge, { redirect_uri: `${sim.credentials.redirectUri}/` });
    expect(res.status).toBe(400);
    expect(res.location).toBeNull();
  });

  test('authorize: PKCE with S256 is required', async () => {
    const res = await start(pkcePair().challenge, { code_challenge_method: 'plain' });
    expect(new URL(res.location!).searchParams.get('error')).toBe('invalid_request');
  });

  test('token: authorization_code with the right code_verifier returns a JWT with sub, scope and exp 60 min', async () => {
    const { verifier, challenge } = pkcePair();
    const code = new URL((await start(challenge)).location!).searchParams.get('code')!;
    const res = await exchange(code, verifier);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope });
    const claims = decodeJwt(res.json.access_token);
    expect(claims.sub).toBe(sim.control.members.defaultMemberId);
    expect(claims.scope).toBe(scope);
    expect(claims.exp).toBe(ANCHOR.getTime() / 1000 + 3600);
    const me = await call(sim, '/users/me', { bearer: res.json.access_token });
    expect(me.json.id).toBe(claims.sub);
  });

  test('token: a wrong code_verifier is invalid_grant', async () => {
    const { challenge } = pkcePair();
    const code = new URL((await start(challenge)).location!).searchParams.get('code')!;
    const res = await exchange(code, pkcePair().verifier);
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('invalid_grant');
  });

  test('token: authorization codes are single use', async () => {
    const { verifier, challenge } = pkcePair();
    const code = new URL((await start(challenge)).location!).searchParams.get('code')!;
    expect((await exchange(code, verifier)).status).toBe(200);
    const again = await exchange(code, verifier);
    expect(again.status).toBe(400);
    expect(again.json).toEqual({ error: 'invalid_grant' });
  });

  test('token: a wrong client secret is invalid_client', async () => {
    const res = await tokenRequest(sim, {
      grant_type: 'refresh_token',
      refresh_token: sim.credentials.refreshToken,
      client_id: sim.credentials.clientId,
      client_secret: 'wrong',
    });
    expect(res.status).toBe(401);
    expect(res.json.error).toBe('invalid_client');
  });

  test('refresh: rotated on every use; reuse of the old token is 400 invalid_grant', async () => {
    const first = sim.control.credentials.issueRefreshToken();
    const a = await refresh(sim, first);
    expect(a.status).toBe(200);
    expect(a.json.refresh_token).not.toBe(first);
    const reuse = await refresh(sim, first);
    expect(reuse.status).toBe(400);
    expect(reuse.json).toEqual({ error: 'invalid_grant' });
    const b = await refresh(sim, a.json.refresh_token);
    expect(b.status).toBe(200);
  });

  test('refresh: the banner refresh token is valid with every member read scope', async () => {
    const res = await refresh(sim, sim.credentials.refreshToken);
    expect(res.status).toBe(200);
    expect(res.json.scope.split(' ').sort()).toEqual(
      ['read:memberships', 'read:profile', 'read:tags', 'read:user_checkins', 'read:wallets'].sort(),
    );
  });

  test('refresh: a revoked refresh token is invalid_grant', async () => {
    const token = sim.control.credentials.issueRefreshToken();
    sim.control.credentials.revokeRefreshToken(token);
    expect((await refresh(sim, token)).json.error).toBe('invalid_grant');
  });

  test('refresh: tokens expire after 30 days on the simulator clock', async () => {
    const token = sim.control.credentials.issueRefreshToken();
    sim.control.clock.advance(31 * 86_400_000);
    try {
      expect((await refresh(sim, token)).json.error).toBe('invalid_grant');
    } finally {
      sim.control.clock.set(ANCHOR);
    }
  });

  test('token: unknown grant_type is unsupported_grant_type', async () => {
    const res = await tokenRequest(sim, {
      grant_type: 'password',
      client_id: sim.credentials.clientId,
      client_secret: sim.credentials.clientSecret,
    });
    expect(res.json.error).toBe('unsupported_grant_type');
  });
});
