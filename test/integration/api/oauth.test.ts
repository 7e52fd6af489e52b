import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { RefreshTokenRevokedError, RetryAfterTooLongError } from '../../../src/api/errors.js';
import { DEFAULT_TOKEN_ROW } from '../../../src/api/oauth/token-store.js';
import { readTokens } from '../../../src/warehouse/oauth-tokens.js';
import { SharedPauseTooLongError } from '../../../src/api/shared-rate-limiter.js';
import { createApiHarness, expectNoSecrets, type ApiHarness } from './harness.js';

let h: ApiHarness;
const issuedTokens: string[] = [];

beforeAll(async () => {
  h = await createApiHarness('api_oauth');
});
afterAll(async () => {
  await h?.close();
});

const tokenRequests = () => h.sim.control.requests.list().filter((entry) => entry.path === '/v1/oauth/token');

/** Starts each test from SVC_OAUTH_REFRESH_TOKEN = a fresh, valid refresh token and an empty store. */
async function freshGrant(): Promise<Record<string, string>> {
  await h.database.db.deleteFrom('rewards.oauth_tokens').execute();
  const refreshToken = h.sim.control.credentials.issueRefreshToken();
  issuedTokens.push(refreshToken);
  h.sim.control.requests.clear();
  return { SVC_OAUTH_REFRESH_TOKEN: refreshToken };
}

beforeEach(() => {
  h.sim.control.faults.reset();
});

describe('OAuth token manager', () => {
  it('imports SVC_OAUTH_REFRESH_TOKEN into an empty store, encrypted, and reuses the access token until expiry', async () => {
    const env = await freshGrant();
    const { api, tokens } = await h.client({ env });
    expect((await api.getMe()).ok).toBe(true);
    expect((await api.getMyWallets()).ok).toBe(true);
    expect(tokenRequests()).toHaveLength(1);
    const access = await tokens!.getAccessToken();
    issuedTokens.push(access);
    const row = await h.database.db.selectFrom('rewards.oauth_tokens').selectAll().executeTakeFirstOrThrow();
    expect(row.id).toBe(DEFAULT_TOKEN_ROW);
    expect(row.refresh_token_encrypted).not.toContain(env['SVC_OAUTH_REFRESH_TOKEN']);
    expect(row.access_token_encrypted).not.toContain(access);
    expect(row.access_token_expires_at!.getTime()).toBeGreaterThan(Date.now() + 50 * 60_000);
    expect(row.generation).toBe(1);
  });

  it('two processes refreshing at the same moment with rotation: one refresh, same token, neither locked out', async () => {
    const env = await freshGrant();
    const one = await h.client({ env, ownDatabasePool: true });
    const two = await h.client({ env, ownDatabasePool: true });
    const [a, b] = await Promise.all([one.tokens!.getAccessToken(), two.tokens!.getAccessToken()]);
    issuedTokens.push(a);
    expect(a).toBe(b);
    expect(tokenRequests()).toHaveLength(1);
    // Both see the server reject that token at once: still one refresh between them.
    const [c, d] = await Promise.all([
      one.tokens!.refreshAfterRejection(a),
      two.tokens!.refreshAfterRejection(a),
    ]);
    issuedTokens.push(c);
    expect(c).toBe(d);
    expect(c).not.toBe(a);
    expect(tokenRequests()).toHaveLength(2);
    expect(tokenRequests().every((entry) => entry.status === 200)).toBe(true);
    // Neither is locked out: the rotated refresh token still works for both.
    expect((await one.api.getMe()).ok).toBe(true);
    expect((await two.tokens!.refreshAfterRejection(c)) !== c).toBe(true);
    expect((await two.api.getMyTags()).ok).toBe(true);
  });

  it('a crash after the rotated tokens are committed and before the access token is used recovers', async () => {
    const env = await freshGrant();
    const crashing = await h.client({
      env,
      afterRefreshCommitted: () => {
        throw new Error('process died');
      },
    });
    await expect(crashing.api.getMe()).rejects.toThrow('process died');
    const restarted = await h.client({ env, ownDatabasePool: true });
    expect((await restarted.api.getMe()).ok).toBe(true);
    expect(tokenRequests()).toHaveLength(1); // the committed access token was reused
    // The committed refresh token is the live one: the next rotation succeeds.
    const current = await restarted.tokens!.getAccessToken();
    issuedTokens.push(current);
    await expect(restarted.tokens!.refreshAfterRejection(current)).resolves.not.toBe(current);
  });

  it('a bearer 401 triggers one forced refresh and one retry', async () => {
    const env = await freshGrant();
    const { api } = await h.client({ env });
    expect((await api.getMe()).ok).toBe(true);
    // The server's clock moves past the token's exp; our side still believes it valid.
    h.sim.control.clock.advance(2 * 60 * 60_000);
    try {
      expect((await api.getMe()).ok).toBe(true);
      const statuses = h.sim.control.requests.list().map((entry) => `${entry.path}:${entry.status}`);
      expect(statuses).toEqual([
        '/v1/oauth/token:200',
        '/v1/users/me:200',
        '/v1/users/me:401',
        '/v1/oauth/token:200',
        '/v1/users/me:200',
      ]);
    } finally {
      h.sim.control.clock.set(new Date());
    }
  });

  it('invalid_grant: RefreshTokenRevokedError, recorded for status, not retried in a loop', async () => {
    const env = await freshGrant();
    const { api, tokens } = await h.client({ env });
    const access = await tokens!.getAccessToken();
    issuedTokens.push(access);
    h.sim.control.credentials.revokeRefreshTokensOf(h.sim.control.members.defaultMemberId);
    const error = await tokens!.refreshAfterRejection(access).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RefreshTokenRevokedError);
    expect((error as Error).message).toContain('rewards-etl auth');
    const stored = await readTokens(h.database.db, DEFAULT_TOKEN_ROW);
    expect(stored?.lastError).toMatch(/^invalid_grant/);
    const before = tokenRequests().length;
    h.sim.control.clock.advance(2 * 60 * 60_000);
    try {
      await expect(api.getMe()).rejects.toBeInstanceOf(RefreshTokenRevokedError);
    } finally {
      h.sim.control.clock.set(new Date());
    }
    expect(tokenRequests().length).toBe(before);
  });

  /** Whether another process can take the token row lock right now (nowait), within a few quick tries. */
  async function rowLockFree(): Promise<boolean> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const free = await h.database.db
        .transaction()
        .execute(async (trx) => {
          await sql`select id from rewards.oauth_tokens for update nowait`.execute(trx);
          return true;
        })
        .catch(() => false);
      if (free) return true;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return false;
  }

  /** A client whose stored access token has expired: its next getAccessToken refreshes. */
  async function clientNeedingRefresh(prefix: string) {
    const env = await freshGrant();
    const client = await h.client({ env: { ...env, REDIS_PREFIX: `${h.prefix}-${prefix}` } });
    issuedTokens.push(await client.tokens!.getAccessToken());
    await h.database.db
      .updateTable('rewards.oauth_tokens')
      .set({ access_token_expires_at: new Date(0) })
      .execute();
    h.sim.control.requests.clear();
    return client;
  }

  it('a 429 from the token endpoint is waited out after releasing the token row lock, never inside it', async () => {
    const { tokens } = await clientNeedingRefresh('lock-429');
    // One request per second per caller; the token endpoint counts callers by address: spend it.
    h.sim.control.faults.set({ rateLimitRps: 1 });
    await fetch(`${h.sim.baseUrl}/oauth/token`, { method: 'POST' });
    h.sim.control.requests.clear();
    const refreshed = tokens!.getAccessToken();
    while (!tokenRequests().some((entry) => entry.status === 429)) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // During the wait (Retry-After: 1) another process can take the row lock.
    expect(await rowLockFree()).toBe(true);
    issuedTokens.push(await refreshed);
    expect(tokenRequests().map((entry) => entry.status)).toEqual([429, 200]);
  });

  it('a shared pause (another process met a 429) is waited out before taking the token row lock', async () => {
    const { tokens, limiter } = await clientNeedingRefresh('lock-pause');
    await limiter.pauseAll(3_000);
    const refreshed = tokens!.getAccessToken();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await rowLockFree()).toBe(true);
    expect(tokenRequests()).toHaveLength(0);
    issuedTokens.push(await refreshed);
    expect(tokenRequests().map((entry) => entry.status)).toEqual([200]);
  });

  it('a pause set by a Retry-After above RETRY_AFTER_MAX is not waited out by a refresh: it fails at once, sending nothing', async () => {
    const { tokens, limiter } = await clientNeedingRefresh('lock-stop');
    await limiter.pauseAll(60_000, { stopPasses: true });
    const error = await tokens!.getAccessToken().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SharedPauseTooLongError);
    expect((error as Error).message).toMatch(/RETRY_AFTER_MAX/);
    expect(tokenRequests()).toHaveLength(0);
  });

  it('a Retry-After longer than RETRY_AFTER_MAX from the token endpoint fails at once with RetryAfterTooLongError', async () => {
    const env = await freshGrant();
    const { tokens, limiter } = await h.client({
      env: { ...env, REDIS_PREFIX: `${h.prefix}-token-cap`, RETRY_AFTER_MAX: '2s' },
    });
    h.sim.control.faults.set({ rateLimitRps: 0.001 }); // Retry-After: 999
    const error = await tokens!.getAccessToken().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryAfterTooLongError);
    expect((error as RetryAfterTooLongError).retryAfterMs).toBe(999_000);
    expect(await limiter.pausedForMs()).toBeLessThanOrEqual(2_000);
  });

  it('a token endpoint answering 5xx gets exactly one POST per refresh attempt: the request layer never resends a refresh', async () => {
    const env = await freshGrant();
    const { api } = await h.client({ env });
    // Every /v1 answer is a 5xx, the token endpoint's first: the refresh may have reached the server.
    h.sim.control.faults.set({ serverErrorRate: 1 });
    const error = await api.getMe().catch((e: unknown) => e);
    expect((error as Error).name).toBe('TokenEndpointError');
    expect(tokenRequests()).toHaveLength(1);
    // The next attempt (a later pass) is one POST again, not six.
    await api.getMe().catch(() => undefined);
    expect(tokenRequests()).toHaveLength(2);
    h.sim.control.faults.reset();
    // The refresh token was not presented twice in one attempt, so a later attempt still works.
    expect((await api.getMe()).ok).toBe(true);
  });

  it('no credential or token in any log line', () => {
    expect(h.logs.lines.length).toBeGreaterThan(0);
    expect(expectNoSecrets(h.logs.text(), [...h.secrets(), ...issuedTokens])).toEqual([]);
  });
});
