import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { secretValues } from '../../../src/config/secret-values.js';
import { createLogger } from '../../../src/log.js';

function captureLogger(secrets: string[]) {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = createLogger({ level: 'trace', secrets, pretty: false, destination });
  return { logger, output: () => lines.join('') };
}

describe('log redaction', () => {
  const env = {
    SVC_API_BASE_URL: 'http://127.0.0.1:9/v1',
    SVC_API_KEY: 'sk_test_0123456789abcdefghijklmnopqrstuv',
    SVC_OAUTH_CLIENT_ID: 'client-id',
    SVC_OAUTH_CLIENT_SECRET: 'oauth-client-secret-0123456789',
    SVC_OAUTH_REFRESH_TOKEN: 'rt_0123456789abcdefghijklmnop',
    TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
    ALERT_WEBHOOK_SECRET: 'whsec_0123456789abcdef',
  };
  const config = loadConfig(env);
  const raw = [
    env.SVC_API_KEY,
    env.SVC_OAUTH_CLIENT_SECRET,
    env.SVC_OAUTH_REFRESH_TOKEN,
    env.TOKEN_ENCRYPTION_KEY,
    env.ALERT_WEBHOOK_SECRET,
  ];

  it('a secret passed through config never reaches the log, whatever path it takes', () => {
    const { logger, output } = captureLogger(secretValues(config));
    logger.info({ config }, 'loaded configuration');
    logger.info(
      { apiKey: env.SVC_API_KEY, nested: { refreshToken: env.SVC_OAUTH_REFRESH_TOKEN } },
      'named fields',
    );
    logger.warn(
      { headers: { authorization: 'Bearer eyJhbGciOi.abc.def', 'x-api-key': env.SVC_API_KEY } },
      'req',
    );
    // A careless message that interpolates a secret into free text is scrubbed too.
    logger.error(
      `token refresh failed for ${env.SVC_OAUTH_REFRESH_TOKEN} using ${env.SVC_OAUTH_CLIENT_SECRET}`,
    );
    logger.error({ err: new Error(`bad webhook secret ${env.ALERT_WEBHOOK_SECRET}`) }, 'failing request');
    const text = output();
    for (const value of raw) expect(text).not.toContain(value);
    expect(text).not.toContain('eyJhbGciOi.abc.def');
    expect(text).toContain('[redacted]');
    expect(text.split('\n').filter(Boolean)).toHaveLength(5);
  });

  it('passwords inside DATABASE_URL and REDIS_URL are scrubbed, written or percent-decoded', () => {
    const withPasswords = loadConfig({
      DATABASE_URL: 'postgres://etl:db-pass%40word-77@db.internal:5432/rewards_etl',
      REDIS_URL: 'redis://:redis-pass-88@cache.internal:6379',
    });
    const { logger, output } = captureLogger(secretValues(withPasswords));
    logger.error({ err: new Error('connect failed: postgres://etl:db-pass%40word-77@db.internal') }, 'db');
    logger.error('auth failed with password db-pass@word-77');
    logger.warn({ url: 'redis://:redis-pass-88@cache.internal:6379' }, 'redis connection error');
    const text = output();
    expect(text).not.toContain('db-pass');
    expect(text).not.toContain('redis-pass-88');
    expect(text).toContain('db.internal');
    expect(text.split('\n').filter(Boolean)).toHaveLength(3);
  });
});
