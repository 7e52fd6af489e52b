import type { Config } from './config.js';

/** Values that must be scrubbed from any text we emit, whatever path they took. */
export function secretValues(config: Config): string[] {
  const values = [
    config.api.apiKey?.reveal(),
    config.oauth?.clientSecret.reveal(),
    config.oauth?.refreshToken?.reveal(),
    config.oauth?.encryptionKey.reveal().toString('base64'),
    config.alerts.webhookSecret?.reveal(),
    // The key part of a `whsec_…` secret, which a receiver's error might echo on its own.
    config.alerts.webhookSecret?.reveal().replace(/^whsec_/, ''),
    config.statusToken?.reveal(),
  ];
  const long = values.filter((value): value is string => typeof value === 'string' && value.length >= 6);
  const webhookAuthorization = config.alerts.webhookAuthorization?.reveal();
  const webhook = [
    ...passwordForms(config.alerts.webhookPassword?.reveal() ?? ''),
    ...(webhookAuthorization === undefined
      ? []
      : [webhookAuthorization, webhookAuthorization.replace(/^Basic /, '')]),
  ];
  return [...new Set([...long, ...connectionPasswords(config), ...webhook])];
}

/** A URL password as written (percent-encoded) and decoded, the forms long enough to scrub. */
function passwordForms(encoded: string): string[] {
  let decoded = encoded;
  try {
    decoded = decodeURIComponent(encoded);
  } catch {
    // A stray "%" stays as written.
  }
  return [...new Set([encoded, decoded])].filter((value) => value.length >= 4);
}

/**
 * Passwords inside DATABASE_URL and REDIS_URL, as written (percent-encoded) and decoded: a driver's
 * error or a logged URL may carry either form. REDIS_PASSWORD and REDIS_SENTINEL_PASSWORD too.
 */
export function connectionPasswords(config: Config): string[] {
  const fromUrls = [config.databaseUrl.reveal(), config.redisUrl.reveal()].flatMap((text) => {
    try {
      return passwordForms(new URL(text).password);
    } catch {
      return [];
    }
  });
  const { redis } = config;
  const redisPasswords = [
    redis.password?.reveal(),
    redis.topology.mode === 'sentinel' ? redis.topology.sentinelPassword?.reveal() : undefined,
  ].filter((value): value is string => value !== undefined && value.length >= 4);
  return [...new Set([...fromUrls, ...redisPasswords])];
}
