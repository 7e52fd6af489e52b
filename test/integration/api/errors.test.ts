import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiRequester } from '../../../src/api/api-requester.js';
import { classifyResponse } from '../../../src/api/classify-response.js';
import {
  AuthenticationError,
  InsufficientScopeError,
  InvalidJsonError,
  InvalidRequestError,
  NetworkError,
  RequestBlockedError,
  RequestTimeoutError,
  ResourceNotFoundError,
  RouteNotFoundError,
  ServerError,
} from '../../../src/api/errors.js';
import { createHttpTransport } from '../../../src/api/http-transport.js';
import { noopApiMetrics } from '../../../src/api/metrics.js';
import { createApiHarness, expectNoSecrets, type ApiHarness } from './harness.js';

let h: ApiHarness;
const noRetry = { retries: 0, maxTotalMs: 10_000, backoff: { baseMs: 1, capMs: 1 } };

beforeAll(async () => {
  h = await createApiHarness('api_errors');
});
afterAll(async () => {
  await h?.close();
});

describe('typed errors over HTTP against the simulator', () => {
  it('400 envelope A: InvalidRequestError with the code (epoch seconds in created_after)', async () => {
    const { requester } = await h.client({ retry: noRetry });
    const error = await requester
      .getJson('/check_ins', { created_after: '1700000000' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ code: 'invalid_parameter', retryable: false, status: 400 });
    expect((error as InvalidRequestError).request).toMatchObject({
      method: 'GET',
      params: { created_after: '1700000000' },
    });
  });

  it('404 envelope A: ResourceNotFoundError, and getLocation/getPaymentIntent turn it into null', async () => {
    const { requester, api } = await h.client({ retry: noRetry });
    const error = await requester.getJson(`/payment_intents/${randomUUID()}`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResourceNotFoundError);
    expect(await api.getLocation(randomUUID())).toBeNull();
    expect(await api.getPaymentIntent(randomUUID())).toBeNull();
  });

  it('404 envelope C: RouteNotFoundError for a route that does not exist', async () => {
    const { requester } = await h.client({ retry: noRetry });
    const error = await requester.getJson('/restaurants/no/such/route').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RouteNotFoundError);
    expect(error).toMatchObject({ errorCode: 'EndpointNotFoundException', retryable: false });
  });

  it('401 envelope A invalid_api_key: AuthenticationError naming the API key, without the key', async () => {
    const revoked = h.sim.control.credentials.mintApiKey(['read:checkins']);
    h.sim.control.credentials.revokeApiKey(revoked);
    const { api } = await h.client({ retry: noRetry, env: { SVC_API_KEY: revoked } });
    const pages = api.restaurantPages()[Symbol.asyncIterator]();
    const error = await pages.next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ credential: 'api-key', code: 'invalid_api_key', status: 401 });
    expect(
      JSON.stringify({ message: (error as Error).message, request: (error as AuthenticationError).request }),
    ).not.toContain(revoked);
  });

  it('401 empty body with WWW-Authenticate: one forced refresh, then AuthenticationError', async () => {
    const parts = await h.client({ retry: noRetry });
    let refreshes = 0;
    const requester = createApiRequester({
      baseUrl: h.sim.baseUrl,
      apiKey: undefined,
      tokens: {
        getAccessToken: () => Promise.resolve('not-a-jwt'),
        refreshAfterRejection: () => Promise.resolve((refreshes++, 'still-not-a-jwt')),
      },
      transport: parts.transport,
      limiter: parts.limiter,
      logger: h.logger(parts.config),
      metrics: noopApiMetrics,
      retry: noRetry,
    });
    const error = await requester.getJson('/users/me').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ credential: 'bearer', wwwAuthenticate: 'Bearer error="invalid_token"' });
    expect(refreshes).toBe(1);
  });

  it('403 envelope A insufficient_scope: a key without read:checkins on the feed', async () => {
    const { requester } = await h.client({
      retry: noRetry,
      env: { SVC_API_KEY: h.sim.credentials.apiKeyNoScopes },
    });
    const error = await requester.getJson('/check_ins').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InsufficientScopeError);
    expect((error as Error).message).toContain('read:checkins');
  });

  it('403 empty body with WWW-Authenticate insufficient_scope: a bearer lacking read:wallets', async () => {
    const parts = await h.client({ retry: noRetry });
    const narrow = await h.sim.control.credentials.accessToken({ scopes: ['read:profile'] });
    const requester = createApiRequester({
      baseUrl: h.sim.baseUrl,
      apiKey: undefined,
      tokens: {
        getAccessToken: () => Promise.resolve(narrow),
        refreshAfterRejection: () => Promise.resolve(narrow),
      },
      transport: parts.transport,
      limiter: parts.limiter,
      logger: h.logger(parts.config),
      metrics: noopApiMetrics,
      retry: noRetry,
    });
    const error = await requester.getJson('/users/me/wallets').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InsufficientScopeError);
    expect(error).toMatchObject({ credential: 'bearer', status: 403 });
  });

  it('403 HTML page without a User-Agent: RequestBlockedError; our client always sends one', async () => {
    const url = `${h.sim.baseUrl}/check_ins?page_size=1`;
    const response = await request(url, {
      headers: { 'x-api-key': h.sim.credentials.apiKey, 'user-agent': '' },
    });
    const classified = classifyResponse(
      { status: response.statusCode, headers: response.headers, body: await response.body.text() },
      { credential: 'api-key', request: { method: 'GET', url, params: {} }, nowMs: Date.now() },
    );
    expect(classified.ok ? null : classified.error).toBeInstanceOf(RequestBlockedError);
    const { api } = await h.client({ retry: noRetry });
    await expect(
      api.countCheckIns({ createdAfter: new Date(0), createdBefore: new Date() }),
    ).resolves.toBeGreaterThan(0);
    expect(() => createHttpTransport({ userAgent: ' ', timeoutMs: 1000, maxResponseBytes: 1024 })).toThrow(
      /User-Agent/,
    );
  });

  it('5xx with an HTML body: ServerError, retried, then surfaced when it persists', async () => {
    const { requester } = await h.client({
      retry: { retries: 2, maxTotalMs: 10_000, backoff: { baseMs: 5, capMs: 20 } },
    });
    h.sim.control.requests.clear();
    h.sim.control.faults.set({ serverErrorRate: 1 });
    try {
      const error = await requester.getJson('/balance').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ServerError);
      expect(error).toMatchObject({ retryable: true, contentType: expect.stringContaining('text/html') });
      expect(h.sim.control.requests.list().filter((r) => r.path === '/v1/balance')).toHaveLength(3);
    } finally {
      h.sim.control.faults.reset();
    }
  });

  it('a truncated body: InvalidJsonError when it persists, recovered by a retry when it does not', async () => {
    const { requester } = await h.client({ retry: noRetry });
    h.sim.control.faults.set({ truncateNext: 1 });
    const error = await requester.getJson('/balance').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidJsonError);
    const retrying = await h.client();
    h.sim.control.faults.set({ truncateNext: 1 });
    await expect(retrying.api.getBalance()).resolves.toMatchObject({ ok: true });
  });

  it('a refused connection: NetworkError (retryable)', async () => {
    const { requester } = await h.client({
      retry: noRetry,
      env: { SVC_API_BASE_URL: 'http://127.0.0.1:9/v1' },
    });
    const error = await requester.getJson('/balance').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ retryable: true });
    expect((error as Error).cause).toBeDefined();
  });

  it('a server slower than the timeout: RequestTimeoutError', async () => {
    const { requester } = await h.client({ retry: noRetry, env: { SVC_REQUEST_TIMEOUT: '100ms' } });
    h.sim.control.faults.set({ latencyMs: 600 });
    try {
      const error = await requester.getJson('/balance').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RequestTimeoutError);
      expect(error).toMatchObject({ retryable: true });
      expect(['headers', 'total']).toContain((error as RequestTimeoutError).phase);
    } finally {
      h.sim.control.faults.reset();
    }
  });

  it('the caller can cancel: the AbortSignal reason comes back, not a partner error', async () => {
    const { api } = await h.client({ retry: noRetry });
    h.sim.control.faults.set({ latencyMs: 500 });
    try {
      const controller = new AbortController();
      const pending = api.getBalance({ signal: controller.signal });
      setTimeout(() => controller.abort(new Error('shutting down')), 50);
      await expect(pending).rejects.toThrow('shutting down');
    } finally {
      h.sim.control.faults.reset();
    }
  });

  it('no credential in any log line', () => {
    expect(h.logs.lines.length).toBeGreaterThan(0);
    expect(expectNoSecrets(h.logs.text(), h.secrets())).toEqual([]);
  });
});
