import { describe, expect, it } from 'vitest';
import {
  causeOf,
  redisSetting,
  startupRetryDelayMs,
  waitForService,
} from '../../../src/cli/wait-for-services.js';
import { createLogger } from '../../../src/log.js';
import type { RedisSettings } from '../../../src/redis/settings.js';

describe('start-up wait: bounded, named after the setting', () => {
  it('names the variable that says where Redis is, by mode', () => {
    const of = (mode: 'standalone' | 'sentinel' | 'cluster') =>
      redisSetting({ topology: { mode } } as unknown as RedisSettings);
    expect([of('standalone'), of('sentinel'), of('cluster')]).toEqual([
      'REDIS_URL',
      'REDIS_SENTINELS',
      'REDIS_CLUSTER_NODES',
    ]);
  });

  it('retries at 0.5 s, 1 s, 2 s, then every 3 s', () => {
    expect([1, 2, 3, 4, 9].map(startupRetryDelayMs)).toEqual([500, 1_000, 2_000, 3_000, 3_000]);
  });

  it('takes the first address of an AggregateError (localhost: ::1 and 127.0.0.1)', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED ::1:5433'), { code: 'ECONNREFUSED' });
    expect(causeOf(new AggregateError([refused], ''))).toEqual({
      text: 'connect ECONNREFUSED ::1:5433',
      code: 'ECONNREFUSED',
    });
  });

  it('gives up once STARTUP_TIMEOUT has passed, with exit 1 naming the setting and the cause', async () => {
    let now = 0;
    let attempts = 0;
    const probe = {
      service: 'Redis' as const,
      setting: 'REDIS_SENTINELS',
      target: 'sentinel "mymaster" via 10.0.0.11:26379',
      advice: '',
      attempt: () => {
        attempts++;
        return Promise.resolve({ ok: false as const, cause: 'connect ETIMEDOUT', final: false });
      },
    };
    await expect(
      waitForService(probe, {
        timeoutMs: 20_000,
        logger: createLogger({ level: 'silent' }),
        nowMs: () => now,
        sleep: (ms) => {
          now += ms;
          return Promise.resolve();
        },
      }),
    ).rejects.toMatchObject({
      name: 'CliExit',
      code: 1,
      message: expect.stringMatching(
        /unreachable after \d+ s \(STARTUP_TIMEOUT\): connect ETIMEDOUT; check REDIS_SENTINELS/,
      ),
    });
    expect(attempts).toBeGreaterThan(3);
    expect(now).toBeLessThanOrEqual(20_000);
  });
});
