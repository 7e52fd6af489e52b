import { describe, expect, it } from 'vitest';
import { singleFlightCache } from '../../../src/http/single-flight-cache.js';

describe('the status report cache', () => {
  it('callers during a computation and within the TTL after it share one computation', async () => {
    let now = 0;
    let calls = 0;
    const cache = singleFlightCache(() => Promise.resolve(++calls), { ttlMs: 5_000, nowMs: () => now });
    expect(await Promise.all([cache.get(), cache.get(), cache.get()])).toEqual([1, 1, 1]);
    now = 4_999;
    expect(await cache.get()).toBe(1);
    now = 5_000;
    expect(await cache.get()).toBe(2);
    expect(calls).toBe(2);
  });

  it('a failure is not kept: the next caller computes again', async () => {
    let calls = 0;
    const cache = singleFlightCache(
      () => (++calls === 1 ? Promise.reject(new Error('db down')) : Promise.resolve(calls)),
      { ttlMs: 5_000, nowMs: () => 0 },
    );
    await expect(cache.get()).rejects.toThrow('db down');
    expect(await cache.get()).toBe(2);
  });
});
