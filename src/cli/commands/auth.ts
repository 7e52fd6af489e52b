import { Command } from 'commander';
import { type Config, type OAuthConfig } from '../../config/config.js';
import { ConfigError } from '../../config/config-error.js';
import { MEMBER_SCOPES, startAuthorization } from '../../api/oauth/pkce.js';
import type { CliContext } from '../context.js';
import { requireOAuth } from '../require-oauth.js';
import { CliExit, ExitCode } from '../exit-codes.js';
import { deprecatedSecretFlag, readSecretLines } from '../read-secret.js';

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
  const { DEFAULT_TOKEN_ROW } = await import('../../api/oauth/token-store.js');
  const { createTokenStore } = await import('../../warehouse/oauth-tokens.js');
  const { createDatabase } = await import('../../warehouse/database.js');
  const db = createDatabase({
    url: config.databaseUrl.reveal(),
    maxConnections: 1,
    applicationName: 'rewards-etl auth',
  });
  const key = oauth.encryptionKey.reveal();
  try {
    await createTokenStore(db).replace(DEFAULT_TOKEN_ROW, {
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

/**
 * The refresh token for `auth import`: standard input first (a pipe, or asked for on a terminal
 * when SVC_OAUTH_REFRESH_TOKEN is not set), then SVC_OAUTH_REFRESH_TOKEN; the flag still works
 * but warns.
 */
async function importedRefreshToken(
  context: CliContext,
  flag: string | undefined,
  oauth: OAuthConfig,
): Promise<string> {
  if (flag !== undefined && flag !== '') {
    context.stderr.write(
      deprecatedSecretFlag(
        '--refresh-token',
        'pipe the token on standard input or set SVC_OAUTH_REFRESH_TOKEN',
      ),
    );
    return flag;
  }
  const fromEnv = oauth.refreshToken?.reveal();
  const askTerminal = context.stdin.isTTY === true && fromEnv === undefined;
  if (context.stdin.isTTY !== true || askTerminal) {
    const [fromStdin] = await readSecretLines(context.stdin, ['refresh token: '], context.stderr);
    if (fromStdin !== undefined) return fromStdin;
  }
  if (fromEnv === undefined || fromEnv === '') {
    throw new ConfigError(
      'SVC_OAUTH_REFRESH_TOKEN',
      'required (or pipe the refresh token on standard input: rewards-etl auth import < token-file)',
    );
  }
  return fromEnv;
}

/** The code and code_verifier for `auth exchange`: read from standard input unless given as (deprecated) flags. */
async function exchangeInputs(
  context: CliContext,
  flags: { code?: string; verifier?: string },
): Promise<{ code: string; verifier: string }> {
  for (const [flag, value] of [
    ['--code', flags.code],
    ['--verifier', flags.verifier],
  ] as const) {
    if (value !== undefined) {
      context.stderr.write(deprecatedSecretFlag(flag, 'paste it (or pipe it) on standard input instead'));
    }
  }
  const missing = [
    ...(flags.code === undefined ? ['code from the redirect: '] : []),
    ...(flags.verifier === undefined ? ['code_verifier: '] : []),
  ];
  const read = missing.length === 0 ? [] : await readSecretLines(context.stdin, missing, context.stderr);
  const code = flags.code ?? read.shift();
  const verifier = flags.verifier ?? read.shift();
  if (code === undefined || verifier === undefined) {
    throw new CliExit(
      ExitCode.usage,
      'auth exchange reads the code, then the code_verifier, from standard input (one a line); got fewer lines',
    );
  }
  return { code, verifier };
}

/** `rewards-etl auth url | exchange | import`: getting a member's grant into the token store. */
export function authCommand(context: CliContext): Command {
  return new Command('auth')
    .description('OAuth helpers: authorize URL with PKCE, code exchange, importing a refresh token')
    .addCommand(authUrlCommand(context))
    .addCommand(authExchangeCommand(context))
    .addCommand(authImportCommand(context));
}

function authUrlCommand(context: CliContext): Command {
  return new Command('url')
    .description(
      'print the authorize URL (PKCE S256 + state) and the code_verifier to keep for `auth exchange`',
    )
    .option('--redirect-uri <uri>', 'a registered redirect URI (default SVC_OAUTH_REDIRECT_URI)')
    .option('--scope <scopes>', 'space-separated scopes', MEMBER_SCOPES.join(' '))
    .action((options: { redirectUri?: string; scope: string }) => {
      const oauth = requireOAuth(context.config(), 'auth');
      const { url, state, verifier } = startAuthorization({
        oauth,
        redirectUri: redirectUriFrom(options.redirectUri, oauth),
        scopes: options.scope,
      });
      context.stdout.write(
        `Open this URL and approve:\n  ${url}\n\n` +
          `state (check it matches the redirect): ${state}\n` +
          `code_verifier (keep it for the exchange): ${verifier}\n\n` +
          `Then run \`rewards-etl auth exchange\` and paste the code from the redirect, then the code_verifier\n` +
          `(or pipe them in, one a line).\n`,
      );
    });
}

function authExchangeCommand(context: CliContext): Command {
  return new Command('exchange')
    .description('exchange an authorization code for tokens and store them encrypted')
    .option('--code <code>', 'deprecated: the code from the redirect (read from standard input instead)')
    .option('--verifier <verifier>', 'deprecated: the code_verifier (read from standard input instead)')
    .option('--redirect-uri <uri>', 'the redirect URI used with `auth url` (default SVC_OAUTH_REDIRECT_URI)')
    .addHelpText(
      'after',
      '\nReads the code, then the code_verifier printed by `auth url`, from standard input (one a line).',
    )
    .action(async (options: { code?: string; verifier?: string; redirectUri?: string }) => {
      const config = context.config();
      const oauth = requireOAuth(config, 'auth');
      const redirectUri = redirectUriFrom(options.redirectUri, oauth);
      const { code, verifier } = await exchangeInputs(context, options);
      const { createHttpTransport, transportOptionsFrom } = await import('../../api/http-transport.js');
      const { createTokenEndpoint, retryAfterRateLimits } = await import('../../api/oauth/token-endpoint.js');
      const transport = createHttpTransport(transportOptionsFrom(config.api));
      try {
        const endpoint = createTokenEndpoint({
          oauth,
          transport,
          retryAfterMaxMs: config.api.retryAfterMaxMs,
        });
        const issued = await retryAfterRateLimits(() =>
          endpoint.exchangeCode({ code, verifier, redirectUri }),
        );
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
}

function authImportCommand(context: CliContext): Command {
  return new Command('import')
    .description(
      'redeem a refresh token (from standard input, else SVC_OAUTH_REFRESH_TOKEN) at the token endpoint, then store it in place of the stored one; a token the endpoint refuses is not stored',
    )
    .option('--refresh-token <token>', 'deprecated: the refresh token (pipe it on standard input instead)')
    .action(async (options: { refreshToken?: string }) => {
      const config = context.config();
      const oauth = requireOAuth(config, 'auth');
      const refreshToken = await importedRefreshToken(context, options.refreshToken, oauth);
      const issued = await redeemRefreshToken(config, oauth, refreshToken);
      await storeTokens(config, oauth, {
        // The endpoint may rotate it: the presented one is then spent.
        refreshToken: issued.refreshToken ?? refreshToken,
        accessToken: issued.accessToken,
        accessTokenExpiresAt: issued.accessTokenExpiresAt,
      });
      context.stdout.write(
        `redeemed and stored the refresh token (encrypted); access token valid until ${issued.accessTokenExpiresAt.toISOString()}\n`,
      );
    });
}

/**
 * One refresh with the token before it replaces the stored one (as `members import` does): a bogus
 * or spent token used to be stored, and payment intents stopped at the next refresh (issue 40).
 */
async function redeemRefreshToken(config: Config, oauth: OAuthConfig, refreshToken: string) {
  const { createHttpTransport, transportOptionsFrom } = await import('../../api/http-transport.js');
  const { createTokenEndpoint, retryAfterRateLimits } = await import('../../api/oauth/token-endpoint.js');
  const { RefreshTokenRevokedError } = await import('../../api/errors.js');
  const transport = createHttpTransport(transportOptionsFrom(config.api));
  try {
    const endpoint = createTokenEndpoint({ oauth, transport, retryAfterMaxMs: config.api.retryAfterMaxMs });
    return await retryAfterRateLimits(() => endpoint.refresh(refreshToken));
  } catch (error) {
    const cause =
      error instanceof RefreshTokenRevokedError
        ? 'the token endpoint rejected it (invalid_grant: revoked, expired, already used, or not a refresh token)'
        : `the token endpoint could not redeem it: ${(error as Error).message}`;
    throw new CliExit(ExitCode.failed, `refresh token not stored: ${cause}; the stored token is unchanged`);
  } finally {
    await transport.close();
  }
}
