import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimitedError, RetryAfterTooLongError } from '../../../src/api/errors.js';
import { SharedPauseTooLongError } from '../../../src/api/shared-rate-limiter.js';
import type { RequestLogEntry } from '../../../src/simulator/index.js';
import { createApiHarness, expectNoSecrets, type ApiHarness } from './harness.js';

let h: ApiHarness;

beforeAll(async () => {
  h = await createApiHarness('api_rate_limit');
});
afterAll(async () => {
  await h?.close();
});

/** Largest number of requests the simulator logged inside any window of `windowMs`. */
function maxInWindow(entries: readonly RequestLogEntry[], windowMs: number): number {
  const times = entries.map((entry) => Date.parse(entry.at)).sort((a, b) => a - b);
  let max = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while (times[end]! - times[start]! >= windowMs) start++;
    max = Math.max(max, end - start + 1);
  }
  return max;
}

describe('retries', () => {
  it('retries a retryable failure with backoff and logs each retry without credentials', async () => {
    const { api } = await h.client();
    h.sim.control.requests.clear();
    h.sim.control.faults.set({ truncateNext: 2 });
    await expect(api.getBalance()).resolves.toMatchObject({ ok: true });
    expect(h.sim.control.requests.list().filter((r) => r.path === '/v1/balance')).toHaveLength(3);
    expect(h.logs.lines.filter((line) => line.includes('retrying'))).toHaveLength(2);
  });

  it('does not retry other 4xx', async () => {
    const { requester } = await h.client();
    h.sim.control.requests.clear();
    await expect(requester.getJson('/check_ins', { location: 'not-a-uuid' })).rejects.toMatchObject({
      status: 400,
    });
    expect(h.sim.control.requests.list()).toHaveLength(1);
  });
});

describe('429 and Retry-After', () => {
  it('waits as long as the server asks, without using the retry budget, and pauses every process', async () => {
    // The simulator allows 1 request per second per credential: a burst of 3 meets 429s.
    h.sim.control.faults.set({ rateLimitRps: 1 });
    try {
      const a = await h.client({ retry: { retries: 0, maxTotalMs: 30_000 } });
      const b = await h.client({ retry: { retries: 0, maxTotalMs: 30_000 } });
      h.sim.control.requests.clear();
      const results = await Promise.all([a.api.getBalance(), a.api.getBalance(), b.api.getBalance()]);
      expect(results.every((result) => result.ok)).toBe(true);
      const log = h.sim.control.requests.list();
      const limited = log.filter((entry) => entry.status === 429);
      expect(limited.length).toBeGreaterThan(0);
      // After each 429 (Retry-After: 1), no process got through for the next second (requests
      // already in flight at that moment may meet a 429 too).
      for (const hit of limited) {
        const hitAt = Date.parse(hit.at);
        const next = log.find((entry) => Date.parse(entry.at) > hitAt && entry.status === 200);
        if (next) expect(Date.parse(next.at) - hitAt).toBeGreaterThanOrEqual(950);
      }
    } finally {
      h.sim.control.faults.reset();
    }
  });

  it('shares the pause through Redis: another process sees it', async () => {
    const a = await h.client();
    const b = await h.client();
    await a.limiter.pauseAll(1500);
    expect(await b.limiter.pausedForMs()).toBeGreaterThan(1000);
    await a.limiter.pauseAll(10); // a shorter pause never cuts a longer one
    expect(await b.limiter.pausedForMs()).toBeGreaterThan(1000);
  });

  it('gives up with RateLimitedError when the wait exceeds the total time budget', async () => {
    h.sim.control.faults.set({ rateLimitRps: 0.2 });
    try {
      const { api } = await h.client({
        retry: { retries: 3, maxTotalMs: 500 },
        env: { REDIS_PREFIX: `${h.prefix}-giveup` }, // no pause left by the tests above
      });
      await api.getBalance().catch(() => undefined); // spends the single token
      const error = await api.getBalance().catch((e: unknown) => e);
      // Its own 429, or the pause the first call's 429 set for everyone: either way it stops.
      expect([RateLimitedError, SharedPauseTooLongError].some((type) => error instanceof type)).toBe(true);
    } finally {
      h.sim.control.faults.reset();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  });
});

describe('RETRY_AFTER_MAX caps the honoured Retry-After', () => {
  it('a longer Retry-After fails the request at once with RetryAfterTooLongError and pauses every process only for the cap', async () => {
    const prefix = `${h.prefix}-cap`;
    const a = await h.client({ env: { RETRY_AFTER_MAX: '3s', REDIS_PREFIX: prefix } });
    const b = await h.client({ env: { RETRY_AFTER_MAX: '3s', REDIS_PREFIX: prefix } });
    h.sim.control.faults.set({ rateLimitRps: 0.001 }); // Retry-After: 999 (seconds)
    try {
      const error = await a.api.getBalance().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RetryAfterTooLongError);
      expect(error).toMatchObject({ retryAfterMs: 999_000, capMs: 3_000, retryable: true });
      expect((error as Error).message).toMatch(/longer than RETRY_AFTER_MAX/);
      const paused = await b.limiter.pausedForMs();
      expect(paused).toBeGreaterThan(0);
      expect(paused).toBeLessThanOrEqual(3_000);
      expect(h.sim.control.requests.list().filter((r) => r.status === 429).length).toBeGreaterThan(0);
    } finally {
      h.sim.control.faults.reset();
    }
  });

  it('a shared pause longer than what is left of the request budget fails the request at once, sending nothing', async () => {
    const prefix = `${h.prefix}-budget`;
    const a = await h.client({ retry: { retries: 3, maxTotalMs: 2_000 }, env: { REDIS_PREFIX: prefix } });
    const b = await h.client({ env: { REDIS_PREFIX: prefix } });
    await b.limiter.pauseAll(600_000); // another process met a 10-minute Retry-After
    const sentBefore = h.sim.control.requests.list().length;
    const error = await a.api.getBalance().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SharedPauseTooLongError);
    expect((error as Error).message).toMatch(/longer than this request may wait/);
    expect(h.sim.control.requests.list().length).toBe(sentBefore);
  });

  it('no shared pause outlives a day, so no timer can overflow', async () => {
    const { limiter } = await h.client({ env: { REDIS_PREFIX: `${h.prefix}-overflow` } });
    await limiter.pauseAll(30 * 86_400_000); // past Node's 2^31 - 1 ms timer limit
    const paused = await limiter.pausedForMs();
    expect(paused).toBeGreaterThan(86_000_000);
    expect(paused).toBeLessThanOrEqual(86_400_000);
  });
});

describe('one rate limit shared by every process', () => {
  it('three limiter instances together stay within SVC_RATE_LIMIT_RPS and meet no 429', async () => {
    const rps = 10;
    h.sim.control.faults.set({ rateLimitRps: rps });
    const prefix = `${h.prefix}-shared`;
    try {
      const clients = await Promise.all(
        [0, 1, 2].map(() => h.client({ env: { SVC_RATE_LIMIT_RPS: String(rps), REDIS_PREFIX: prefix } })),
      );
      // Let the simulator's bucket refill after the other tests.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      h.sim.control.requests.clear();
      const until = Date.now() + 3000;
      const counts = [0, 0, 0];
      await Promise.all(
        clients.map(async (client, index) => {
          while (Date.now() < until) {
            await client.api.getBalance();
            counts[index]!++;
          }
        }),
      );
      const log = h.sim.control.requests.list().filter((entry) => entry.path === '/v1/balance');
      expect(log.filter((entry) => entry.status === 429)).toHaveLength(0);
      // One request starts per slot, so any second holds at most rps + 1 starts (one late in its
      // slot, then rps on time). The log stamps a request when its answer is ready, which lag on
      // a loaded machine can pull one slot closer; over three seconds that slack does not add up.
      expect(maxInWindow(log, 1000)).toBeLessThanOrEqual(rps + 2);
      expect(maxInWindow(log, 3000)).toBeLessThanOrEqual(3 * rps + 2);
      expect(counts.every((count) => count > 0)).toBe(true);
    } finally {
      h.sim.control.faults.reset();
    }
  });
});

describe('logs', () => {
  it('carry no credential', () => {
    expect(expectNoSecrets(h.logs.text(), h.secrets())).toEqual([]);
  });
});
