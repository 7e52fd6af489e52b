import { inspect } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadConfig, requireApiBaseUrl } from '../../../src/config/config.js';
import { secretValues } from '../../../src/config/secret-values.js';
import { ConfigError } from '../../../src/config/config-error.js';
import { formatDuration, parseDuration } from '../../../src/duration.js';

const KEY = Buffer.alloc(32, 7).toString('base64');

describe('durations', () => {
  it.each([
    ['90s', 90_000],
    ['2m', 120_000],
    ['24h', 86_400_000],
    ['7d', 604_800_000],
    ['500ms', 500],
    ['1h30m', 5_400_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '10', 'h', '5 minutes', '-2m', '1.5h', '2m x'])('rejects %j', (text) => {
    expect(() => parseDuration(text)).toThrow(/not a duration/);
  });

  it('formatDuration and parseDuration round-trip', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000_000 }), (ms) => {
        expect(parseDuration(formatDuration(ms))).toBe(ms);
      }),
    );
  });
});

describe('configuration', () => {
  it('applies the contract defaults', () => {
    const config = loadConfig({});
    expect(config.databaseUrl.reveal()).toBe('postgres://postgres@127.0.0.1:5432/rewards_etl');
    expect(config.redisUrl.reveal()).toBe('redis://127.0.0.1:6379');
    expect(config.api.rateLimitRps).toBe(10);
    expect(config.api.pageSize).toBe(100);
    expect(config.api.userAgent).toMatch(/^rewards-etl\/\d+\.\d+\.\d+/);
    expect(config.checkins).toMatchObject({
      windowMs: 3_600_000,
      safetyLagMs: 60_000,
      lookbackMs: 86_400_000,
    });
    expect(config.checkins.startAt).toBeUndefined();
    // A check-in is in the warehouse within about 1.5 min (issue 32: feed lag at most 2 min).
    expect(config.schedules.checkinsMs).toBe(30_000);
    expect(config.httpPort).toBe(9464);
    expect(config.httpHost).toBe('127.0.0.1');
    expect(config.statusToken).toBeUndefined();
    expect(config.api.retryAfterMaxMs).toBe(900_000);
    expect(config.api.maxResponseBytes).toBe(32 * 1024 * 1024);
    expect(config.alerts.maxReplyBytes).toBe(64 * 1024);
    expect(config.checkins.deleteConfirmAfterMs).toBe(1_800_000);
    expect(config.logLevel).toBe('info');
    expect(config.oauth).toBeUndefined();
  });

  it('reads every variable of the contract', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://u@db:5432/w',
      REDIS_URL: 'redis://cache:6379',
      SVC_API_BASE_URL: 'https://api.example.test/v1/',
      SVC_API_KEY: 'sk_test_abcdefghijklmnopqrstuvwxyz012345',
      SVC_USER_AGENT: 'partner-app/2',
      SVC_OAUTH_CLIENT_ID: '6f1c1c1e-0000-4000-8000-000000000001',
      SVC_OAUTH_CLIENT_SECRET: 'client-secret-value-1234567890',
      SVC_OAUTH_REFRESH_TOKEN: 'refresh-token-value-1234567890',
      TOKEN_ENCRYPTION_KEY: KEY,
      SVC_RATE_LIMIT_RPS: '2.5',
      SVC_PAGE_SIZE: '250',
      CHECKINS_START_AT: '2026-10-01T00:00:00Z',
      CHECKINS_WINDOW: '30m',
      CHECKINS_SAFETY_LAG: '90s',
      CHECKINS_LOOKBACK: '7d',
      ALERT_WEBHOOK_URL: 'https://hooks.example.test/rewards',
      ALERT_WEBHOOK_SECRET: 'whsec_1234567890',
      HTTP_PORT: '8080',
      LOG_LEVEL: 'debug',
    });
    expect(config.api.baseUrl).toBe('https://api.example.test/v1');
    expect(config.api.apiKey?.reveal()).toBe('sk_test_abcdefghijklmnopqrstuvwxyz012345');
    expect(config.api.userAgent).toBe('partner-app/2');
    expect(config.oauth?.tokenUrl).toBe('https://api.example.test/v1/oauth/token');
    expect(config.oauth?.encryptionKey.reveal()).toHaveLength(32);
    expect(config.api.rateLimitRps).toBe(2.5);
    expect(config.api.pageSize).toBe(250);
    expect(config.checkins.startAt?.toISOString()).toBe('2026-10-01T00:00:00.000Z');
    expect(config.checkins).toMatchObject({
      windowMs: 1_800_000,
      safetyLagMs: 90_000,
      lookbackMs: 604_800_000,
    });
    expect(config.alerts.webhookUrl).toBe('https://hooks.example.test/rewards');
    expect(config.httpPort).toBe(8080);
    expect(config.logLevel).toBe('debug');
  });

  it.each([
    ['SVC_RATE_LIMIT_RPS', 'abc'],
    ['SVC_RATE_LIMIT_RPS', '0'],
    ['SVC_PAGE_SIZE', '12.5'],
    ['SVC_PAGE_SIZE', '0'],
    ['CHECKINS_WINDOW', 'an hour'],
    ['CHECKINS_WINDOW', '0s'],
    ['CHECKINS_SAFETY_LAG', '-1m'],
    ['CHECKINS_LOOKBACK', '24'],
    ['CHECKINS_START_AT', 'yesterday'],
    ['DATABASE_URL', 'mysql://x/y'],
    ['REDIS_URL', 'not a url'],
    ['SVC_API_BASE_URL', 'https://api.example.test/v2'],
    ['SVC_USER_AGENT', '   '],
    ['HTTP_PORT', '70000'],
    ['LOG_LEVEL', 'verbose'],
    ['ALERT_WEBHOOK_URL', 'ftp://x'],
    ['SNAPSHOT_MAX_DROP', '1.5'],
    ['STATUS_TOKEN', 'short-token'],
    ['RETRY_AFTER_MAX', '0s'],
    ['RETRY_AFTER_MAX', '25d'],
    ['SVC_ALLOW_PLAIN_HTTP', 'yes'],
    ['SVC_MAX_RESPONSE_SIZE', 'big'],
    ['SVC_MAX_RESPONSE_SIZE', '0'],
    ['SVC_MAX_RESPONSE_SIZE', '-1MB'],
    ['ALERT_WEBHOOK_MAX_REPLY_SIZE', '64 parsecs'],
    ['CHECKINS_DELETE_CONFIRM_AFTER', '0s'],
    ['FRESHNESS_FLOOR', '0s'],
    ['FRESHNESS_FLOOR', '3h'], // longer than the 2 h ceiling of member.visits
    ['FRESHNESS_CEILINGS', 'member.visits'],
    ['FRESHNESS_CEILINGS', 'restaurant.mood=1h'],
    ['FRESHNESS_CEILINGS', 'member.visits=0s'],
  ])('a bad %s stops start-up naming the variable (%j)', (variable, value) => {
    const attempt = () => loadConfig({ [variable]: value });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(new RegExp(`^${variable}: `));
  });

  it.each([
    ['32MB', 32 * 1024 * 1024],
    ['64kb', 64 * 1024],
    ['1048576', 1_048_576],
    ['1.5MB', 1_572_864],
  ])('sizes take units: SVC_MAX_RESPONSE_SIZE=%s is %d bytes', (text, bytes) => {
    expect(loadConfig({ SVC_MAX_RESPONSE_SIZE: text }).api.maxResponseBytes).toBe(bytes);
    expect(loadConfig({ ALERT_WEBHOOK_MAX_REPLY_SIZE: text }).alerts.maxReplyBytes).toBe(bytes);
  });

  it('https: is required for SVC_API_BASE_URL and SVC_OAUTH_TOKEN_URL except for loopback hosts', () => {
    for (const host of ['127.0.0.1:8787', 'localhost:8787', '127.1.2.3', '[::1]:8787']) {
      expect(loadConfig({ SVC_API_BASE_URL: `http://${host}/v1` }).api.baseUrl).toBe(`http://${host}/v1`);
    }
    expect(() => loadConfig({ SVC_API_BASE_URL: 'http://api.example.test/v1' })).toThrow(
      /^SVC_API_BASE_URL: must use https:/,
    );
    expect(() => loadConfig({ SVC_API_BASE_URL: 'http://127.example.test/v1' })).toThrow(
      /^SVC_API_BASE_URL: must use https:/,
    );
    expect(() =>
      loadConfig({
        SVC_API_BASE_URL: 'https://api.example.test/v1',
        SVC_OAUTH_TOKEN_URL: 'http://auth.example.test/oauth/token',
      }),
    ).toThrow(/^SVC_OAUTH_TOKEN_URL: must use https:/);
    // The documented opt-in for a private network (docker compose and its simulator service).
    const optedIn = loadConfig({
      SVC_API_BASE_URL: 'http://simulator:8787/v1',
      SVC_ALLOW_PLAIN_HTTP: 'true',
    });
    expect(optedIn.api.baseUrl).toBe('http://simulator:8787/v1');
  });

  it('STATUS_TOKEN and the URL passwords count as secrets', () => {
    const config = loadConfig({
      STATUS_TOKEN: 'status-token-0123456789',
      DATABASE_URL: 'postgres://etl:pa%2Fss-word@db:5432/w',
      REDIS_URL: 'redis://:redis-secret@cache:6379',
    });
    expect(secretValues(config)).toEqual(
      expect.arrayContaining(['status-token-0123456789', 'pa%2Fss-word', 'pa/ss-word', 'redis-secret']),
    );
    expect(JSON.stringify(config)).not.toContain('status-token-0123456789');
  });

  it('ALERT_WEBHOOK_URL with user:password@ becomes Basic auth: the URL keeps no userinfo, the password is a secret', () => {
    const config = loadConfig({
      ALERT_WEBHOOK_URL: 'https://rewards:p%40ss%3Aword@hooks.example.test/in?x=1',
    });
    expect(config.alerts.webhookUrl).toBe('https://hooks.example.test/in?x=1');
    expect(config.alerts.webhookAuthorization?.reveal()).toBe(
      `Basic ${Buffer.from('rewards:p@ss:word').toString('base64')}`,
    );
    expect(secretValues(config)).toEqual(expect.arrayContaining(['p%40ss%3Aword', 'p@ss:word']));
    expect(JSON.stringify(config)).not.toContain('p@ss');
    expect(
      loadConfig({ ALERT_WEBHOOK_URL: 'https://hooks.example.test/in' }).alerts.webhookAuthorization,
    ).toBe(undefined);
    // Over plain http the password would cross the network in clear: only to this machine.
    expect(() => loadConfig({ ALERT_WEBHOOK_URL: 'http://rewards:secret@hooks.example.test/in' })).toThrow(
      /^ALERT_WEBHOOK_URL: /,
    );
    expect(
      loadConfig({ ALERT_WEBHOOK_URL: 'http://rewards:secret@127.0.0.1:8080/in' }).alerts.webhookUrl,
    ).toBe('http://127.0.0.1:8080/in');
  });

  it('OAuth settings come as a set, with an encryption key', () => {
    const base = { SVC_API_BASE_URL: 'http://127.0.0.1:1/v1' };
    expect(() => loadConfig({ ...base, SVC_OAUTH_CLIENT_ID: 'c' })).toThrow(/^SVC_OAUTH_CLIENT_SECRET: /);
    expect(() =>
      loadConfig({ ...base, SVC_OAUTH_CLIENT_ID: 'c', SVC_OAUTH_CLIENT_SECRET: 's3cret-value' }),
    ).toThrow(/^TOKEN_ENCRYPTION_KEY: /);
    expect(() =>
      loadConfig({
        ...base,
        SVC_OAUTH_CLIENT_ID: 'c',
        SVC_OAUTH_CLIENT_SECRET: 's3cret-value',
        TOKEN_ENCRYPTION_KEY: Buffer.alloc(16).toString('base64'),
      }),
    ).toThrow(/^TOKEN_ENCRYPTION_KEY: must be 32 bytes/);
  });

  it('the base URL is required only where the API is used', () => {
    const config = loadConfig({});
    expect(() => requireApiBaseUrl(config)).toThrow(/^SVC_API_BASE_URL: required/);
  });

  it('secrets print as [redacted] however they are turned into text', () => {
    const secret = 'sk_test_supersecretvalue00000000000000000';
    const config = loadConfig({ SVC_API_KEY: secret, ALERT_WEBHOOK_SECRET: 'whsec_abcdefghij' });
    const renderings = [
      JSON.stringify(config),
      inspect(config, { depth: 10 }),
      String(config.api.apiKey),
      `${String(config.alerts.webhookSecret)}`,
    ];
    for (const text of renderings) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain('whsec_abcdefghij');
    }
    expect(JSON.stringify(config)).toContain('[redacted]');
  });
});
