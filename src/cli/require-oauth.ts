import { type Config, type OAuthConfig } from '../config/config.js';
import { ConfigError } from '../config/config-error.js';

/** The OAuth settings a command needs, or exit 2 naming the first missing variable. */
export function requireOAuth(config: Config, command: string): OAuthConfig {
  if (config.oauth === undefined) {
    throw new ConfigError(
      'SVC_OAUTH_CLIENT_ID',
      `required for \`rewards-etl ${command}\` (with SVC_OAUTH_CLIENT_SECRET and TOKEN_ENCRYPTION_KEY)`,
    );
  }
  return config.oauth;
}
