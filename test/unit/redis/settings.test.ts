import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { secretValues } from '../../../src/config/secret-values.js';
import { ConfigError } from '../../../src/config/config-error.js';
import { reconnectOnReadOnly } from '../../../src/redis/connection.js';
import {
  describeRedis,
  effectiveKeyPrefix,
  hashTagOf,
  parseHostPorts,
  prefixProblem,
} from '../../../src/redis/settings.js';

const SENTINELS = { REDIS_SENTINELS: 's1:26379, s2:26379,[::1]:26380', REDIS_SENTINEL_NAME: 'main' };

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('Redis modes from the environment', () => {
  it('REDIS_URL alone (or nothing) is standalone; rediss:// means TLS', () => {
    expect(loadConfig({}).redis).toMatchObject({ topology: { mode: 'standalone' }, tls: false });
    const tls = loadConfig({ REDIS_URL: 'rediss://cache.example:6380' });
    expect(tls.redis.tls).toBe(true);
    expect(describeRedis(tls.redis)).toBe('standalone cache.example:6380, TLS');
    expect(tls.redisPrefix).toBe('rewards-etl');
  });

  it('REDIS_SENTINELS with REDIS_SENTINEL_NAME is Sentinel mode', () => {
    const config = loadConfig({
      ...SENTINELS,
      REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
      REDIS_PASSWORD: 'data-secret',
    });
    expect(config.redis.topology).toMatchObject({
      mode: 'sentinel',
      name: 'main',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
        { host: '::1', port: 26380 },
      ],
    });
    expect(describeRedis(config.redis)).toBe('sentinel "main" via s1:26379, s2:26379, [::1]:26380');
    expect(config.redisPrefix).toBe('rewards-etl');
  });

  it('REDIS_CLUSTER_NODES is Cluster mode, and the prefix gets a hash tag', () => {
    const config = loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1:7000,10.0.0.2:7000', REDIS_TLS: 'true' });
    expect(config.redis.topology).toMatchObject({ mode: 'cluster' });
    expect(config.redis.tls).toBe(true);
    expect(config.redisPrefix).toBe('{rewards-etl}');
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'a:1', REDIS_PREFIX: '{etl}-prod' }).redisPrefix).toBe(
      '{etl}-prod',
    );
  });

  it.each([
    [{ REDIS_SENTINELS: 's1:26379' }, 'REDIS_SENTINEL_NAME', /required with REDIS_SENTINELS/],
    [{ REDIS_SENTINEL_NAME: 'main' }, 'REDIS_SENTINELS', /required with REDIS_SENTINEL_NAME/],
    [{ ...SENTINELS, REDIS_CLUSTER_NODES: 'a:1' }, 'REDIS_CLUSTER_NODES', /not both/],
    [{ ...SENTINELS, REDIS_URL: 'redis://x:6379' }, 'REDIS_URL', /leave it unset with REDIS_SENTINELS/],
    [{ REDIS_CLUSTER_NODES: 'a:1', REDIS_URL: 'redis://x:6379' }, 'REDIS_URL', /with REDIS_CLUSTER_NODES/],
    [
      { REDIS_SENTINEL_PASSWORD: 'pw-123456', REDIS_CLUSTER_NODES: 'a:1' },
      'REDIS_SENTINEL_PASSWORD',
      /only with/,
    ],
    [{ REDIS_TLS: 'true' }, 'REDIS_TLS', /rediss:\/\//],
    [{ REDIS_URL: 'redis://:pw@x:6379', REDIS_PASSWORD: 'other' }, 'REDIS_PASSWORD', /one place/],
    [{ REDIS_CLUSTER_NODES: 'a:1,b' }, 'REDIS_CLUSTER_NODES', /"b" is not host:port/],
    [{ ...SENTINELS, REDIS_SENTINELS: 'x:70000' }, 'REDIS_SENTINELS', /"x:70000" is not host:port/],
    [{ REDIS_PREFIX: 'a{b' }, 'REDIS_PREFIX', /hash tag/],
    [{ REDIS_PREFIX: '{}x' }, 'REDIS_PREFIX', /hash tag/],
    [{ REDIS_PREFIX: 'a b' }, 'REDIS_PREFIX', /only/],
    [{ REDIS_TLS: 'maybe', REDIS_CLUSTER_NODES: 'a:1' }, 'REDIS_TLS', /true or false/],
    [{ WORKER_IDLE_TIMEOUT: '2s' }, 'WORKER_IDLE_TIMEOUT', /at least 5s/],
  ])('an inconsistent setting stops start-up naming the variable: %j', (env, variable, problem) => {
    const error = configError(env);
    expect(error.variable).toBe(variable);
    expect(error.message).toMatch(problem);
  });

  it('the Redis and Sentinel passwords are secrets: scrubbed, never described', () => {
    const config = loadConfig({
      ...SENTINELS,
      REDIS_SENTINEL_PASSWORD: 'sentinel-pw-81',
      REDIS_PASSWORD: 'data-pw-77',
    });
    expect(secretValues(config)).toEqual(expect.arrayContaining(['sentinel-pw-81', 'data-pw-77']));
    expect(JSON.stringify(config)).not.toMatch(/sentinel-pw-81|data-pw-77/);
    expect(describeRedis(loadConfig({ REDIS_URL: 'redis://u:url-pw-99@h:1' }).redis)).not.toContain(
      'url-pw-99',
    );
  });

  it('WORKER_IDLE_TIMEOUT defaults to 60 s', () => {
    expect(loadConfig({}).worker.idleTimeoutMs).toBe(60_000);
    expect(loadConfig({ WORKER_IDLE_TIMEOUT: '15s' }).worker.idleTimeoutMs).toBe(15_000);
  });
});

describe('key prefix and hash tag', () => {
  it('finds the tag the way Redis Cluster does: first { to the first } after it, not empty', () => {
    expect(hashTagOf('{rewards-etl}')).toBe('rewards-etl');
    expect(hashTagOf('prod-{etl}-x')).toBe('etl');
    expect(hashTagOf('{}x')).toBeUndefined();
    expect(hashTagOf('plain')).toBeUndefined();
  });

  it('every key under a Cluster prefix hashes by one tag, whatever the prefix', () => {
    const prefix = fc.stringMatching(/^[A-Za-z0-9_.-]{1,20}$/);
    fc.assert(
      fc.property(prefix, fc.stringMatching(/^[a-z:-]{0,20}$/), (raw, suffix) => {
        const effective = effectiveKeyPrefix(raw, 'cluster');
        expect(prefixProblem(effective)).toBeUndefined();
        // Any key the project writes is `${prefix}:…`: its tag is the prefix's.
        expect(hashTagOf(`${effective}:${suffix}`)).toBe(raw);
        expect(effectiveKeyPrefix(effective, 'cluster')).toBe(effective);
        expect(effectiveKeyPrefix(raw, 'standalone')).toBe(raw);
        expect(effectiveKeyPrefix(raw, 'sentinel')).toBe(raw);
      }),
    );
  });

  it('parses host:port lists, IPv6 in brackets', () => {
    expect(parseHostPorts('a:1, [fe80::1]:6379 ,b.example:65535')).toEqual([
      { host: 'a', port: 1 },
      { host: 'fe80::1', port: 6379 },
      { host: 'b.example', port: 65_535 },
    ]);
    for (const bad of ['', 'a', 'a:0', ':1', 'a:b', 'http://a:1'])
      expect(() => parseHostPorts(bad)).toThrow();
  });
});

describe('connection options', () => {
  it('a READONLY reply (the old primary, demoted) makes the client reconnect and resend', () => {
    expect(reconnectOnReadOnly(new Error("READONLY You can't write against a read only replica."))).toBe(2);
    expect(reconnectOnReadOnly(new Error('ERR unknown command'))).toBe(false);
  });
});
