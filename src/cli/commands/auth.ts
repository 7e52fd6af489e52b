import { Command } from 'commander';
import { ConfigError, type Config, type OAuthConfig } from '../../config.js';
import {
  MEMBER_SCOPES,
  authorizeEndpointFor,
  buildAuthorizeUrl,
  createPkcePair,
  createState,
} from '../../api/oauth/pkce.js';
import type { CliContext } from '../context.js';

function requireOAuth(config: Config): OAuthConfig {
  if (config.oauth === undefined) {
    throw new ConfigError(
      'SVC_OAUTH_CLIENT_ID',
      'required for `rewards-etl auth` (with SVC_OAUTH_CLIENT_SECRET and TOKEN_ENCRYPTION_KEY)',
    );
  }
  return config.oauth;
}

function redirectUriFrom(option: string | undefined, oauth: OAuthConfig): string {
  const uri = option ?? oauth.redirectUri;
  if (uri === undefined)
    throw new ConfigError(
      'SVC_OAUTH_REDIRECT_URI',
      'required (or pass --redirect-uri): a registered redirect URI',
    );
  return uri;
}

async function storeTokens(
  config: Config,
  oauth: OAuthConfig,
  tokens: { refreshToken: string; accessToken: string | null; accessTokenExpiresAt: Date | null },
): Promise<void> {
  // Loaded here, not at the top: `rewards-etl --help` should not load the database driver.
  const { encryptToken } = await import('../../api/oauth/token-crypto.js');
  const { ACCESS_TOKEN_AAD, REFRESH_TOKEN_AAD } = await import('../../api/oauth/token-manager.js');
  const { DEFAULT_TOKEN_ROW, replaceTokens } = await import('../../api/oauth/token-store.js');
  const { createDatabase } = await import('../../warehouse/database.js');
  const db = createDatabase({
    url: config.databaseUrl.reveal(),
    maxConnections: 1,
    applicationName: 'rewards-etl auth',
  });
  const key = oauth.encryptionKey.reveal();
  try {
    await replaceTokens(db, DEFAULT_TOKEN_ROW, {
      refreshSealed: encryptToken(key, tokens.refreshToken, REFRESH_TOKEN_AAD(DEFAULT_TOKEN_ROW)),
      accessSealed:
        tokens.accessToken === null
          ? null
          : encryptToken(key, tokens.accessToken, ACCESS_TOKEN_AAD(DEFAULT_TOKEN_ROW)),
      accessExpiresAt: tokens.accessTokenExpiresAt,
      now: new Date(),
    });
  } finally {
    await db.destroy();
  }
}

/** `rewards-etl auth url | exchange | import`: getting a member's grant into the token store. */
export function authCommand(context: CliContext): Command {
  const auth = new Command('auth').description(
    'OAuth helpers: authorize URL with PKCE, code exchange, importing a refresh token',
  );

  auth
    .command('url')
    .description(
      'print the authorize URL (PKCE S256 + state) and the code_verifier to keep for `auth exchange`',
    )
    .option('--redirect-uri <uri>', 'a registered redirect URI (default SVC_OAUTH_REDIRECT_URI)')
    .option('--scope <scopes>', 'space-separated scopes', MEMBER_SCOPES.join(' '))
    .action((options: { redirectUri?: string; scope: string }) => {
      const oauth = requireOAuth(context.config());
      const pkce = createPkcePair();
      const state = createState();
      const url = buildAuthorizeUrl({
        authorizeEndpoint: authorizeEndpointFor(oauth.tokenUrl),
        clientId: oauth.clientId,
        redirectUri: redirectUriFrom(options.redirectUri, oauth),
        scopes: options.scope.split(/\s+/).filter((scope) => scope !== ''),
        state,
        codeChallenge: pkce.challenge,
      });
      context.stdout.write(
        `Open this URL and approve:\n  ${url}\n\n` +
          `state (check it matches the redirect): ${state}\n` +
          `code_verifier (keep it for the exchange): ${pkce.verifier}\n\n` +
          `Then: rewards-etl auth exchange --code <code from the redirect> --verifier ${pkce.verifier}\n`,
      );
    });

  auth
    .command('exchange')
    .description('exchange an authorization code for tokens and store them encrypted')
    .requiredOption('--code <code>', 'the code from the redirect')
    .requiredOption('--verifier <verifier>', 'the code_verifier printed by `auth url`')
    .option('--redirect-uri <uri>', 'the redirect URI used with `auth url` (default SVC_OAUTH_REDIRECT_URI)')
    .action(async (options: { code: string; verifier: string; redirectUri?: string }) => {
      const { createHttpTransport } = await import('../../api/http-transport.js');
      const { createTokenEndpoint } = await import('../../api/oauth/token-endpoint.js');
      const config = context.config();
      const oauth = requireOAuth(config);
      const transport = createHttpTransport({
        userAgent: config.api.userAgent,
        timeoutMs: config.api.requestTimeoutMs,
      });
      try {
        const issued = await createTokenEndpoint({ oauth, transport }).exchangeCode({
          code: options.code,
          verifier: options.verifier,
          redirectUri: redirectUriFrom(options.redirectUri, oauth),
        });
        if (issued.refreshToken === null) throw new Error('the token endpoint returned no refresh token');
        await storeTokens(config, oauth, {
          refreshToken: issued.refreshToken,
          accessToken: issued.accessToken,
          accessTokenExpiresAt: issued.accessTokenExpiresAt,
        });
        context.stdout.write(
          `stored the new tokens (encrypted); access token valid until ${issued.accessTokenExpiresAt.toISOString()}\n`,
        );
      } finally {
        await transport.close();
      }
    });

  auth
    .command('import')
    .description(
      'store a refresh token (from --refresh-token or SVC_OAUTH_REFRESH_TOKEN), replacing the stored one',
    )
    .option('--refresh-token <token>', 'the refresh token (default SVC_OAUTH_REFRESH_TOKEN)')
    .action(async (options: { refreshToken?: string }) => {
      const config = context.config();
      const oauth = requireOAuth(config);
      const refreshToken = options.refreshToken ?? oauth.refreshToken?.reveal();
      if (refreshToken === undefined || refreshToken === '') {
        throw new ConfigError('SVC_OAUTH_REFRESH_TOKEN', 'required (or pass --refresh-token)');
      }
      await storeTokens(config, oauth, { refreshToken, accessToken: null, accessTokenExpiresAt: null });
      context.stdout.write(
        'stored the refresh token (encrypted); the next bearer request refreshes the access token\n',
      );
    });

  return auth;
}
