import { describe, expect, it } from 'vitest';
import { isFailoverError, throughFailover } from '../../../src/redis/through-failover.js';

describe('throughFailover', () => {
  it.each([
    ['Connection is closed.', true],
    ['connect ECONNREFUSED 127.0.0.1:7001', true],
    ['CLUSTERDOWN The cluster is down', true],
    ['NOSCRIPT No matching script', false],
    ['WRONGTYPE Operation against a key holding the wrong kind of value', false],
  ])('"%s" is a failover error: %s', (message, expected) => {
    expect(isFailoverError(new Error(message))).toBe(expected);
  });

  it('retries a call a failover failed until it answers', async () => {
    let calls = 0;
    const answer = await throughFailover(
      () => (++calls < 3 ? Promise.reject(new Error('Connection is closed.')) : Promise.resolve(7)),
      { everyMs: 1 },
    );
    expect({ answer, calls }).toEqual({ answer: 7, calls: 3 });
  });

  it('lets any other error, or one past the bound, through', async () => {
    await expect(
      throughFailover(() => Promise.reject(new Error('WRONGTYPE x')), { everyMs: 1 }),
    ).rejects.toThrow('WRONGTYPE');
    await expect(
      throughFailover(() => Promise.reject(new Error('Connection is closed.')), { boundMs: 20, everyMs: 5 }),
    ).rejects.toThrow('Connection is closed.');
  });
});
