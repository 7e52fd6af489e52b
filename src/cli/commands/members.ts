import { Command } from 'commander';
import { ConfigError } from '../../config/config-error.js';
import { MEMBER_SCOPES, startAuthorization } from '../../api/oauth/pkce.js';
import type { IssuedTokens, TokenEndpoint } from '../../api/oauth/token-endpoint.js';
import type { CliContext } from '../context.js';
import { requireOAuth } from '../require-oauth.js';
import { CliExit, ExitCode } from '../exit-codes.js';
import { readSecretLines } from '../read-secret.js';

/** Opens what a members command needs: the warehouse (migrated) and, when asked, the token endpoint. */
async function withWarehouse<T>(
  context: CliContext,
  work: (io: {
    db: import('kysely').Kysely<import('../../warehouse/schema.js').DB>;
    endpoint: () => Promise<TokenEndpoint>;
  }) => Promise<T>,
): Promise<T> {
  const config = context.config();
  const { waitForServices } = await import('../wait-for-services.js');
  await waitForServices(config, context.logger(), { postgres: 'DATABASE_URL' });
  const { createDatabase } = await import('../../warehouse/database.js');
  const { requireMigratedWarehouse } = await import('../warehouse-ready.js');
  const db = createDatabase({
    url: config.databaseUrl.reveal(),
    maxConnections: 2,
    applicationName: 'rewards-etl members',
  });
  let closeTransport: (() => Promise<void>) | undefined;
  try {
    await requireMigratedWarehouse(db, config.databaseUrl.reveal());
    return await work({
      db,
      endpoint: async () => {
        const oauth = requireOAuth(config, 'members');
        const { createHttpTransport, transportOptionsFrom } = await import('../../api/http-transport.js');
        const { createTokenEndpoint } = await import('../../api/oauth/token-endpoint.js');
        const transport = createHttpTransport(transportOptionsFrom(config.api));
        closeTransport = () => transport.close();
        return createTokenEndpoint({ oauth, transport, retryAfterMaxMs: config.api.retryAfterMaxMs });
      },
    });
  } finally {
    await closeTransport?.();
    await db.destroy();
  }
}

/** Stores a member's freshly issued tokens (encrypted) and marks the connection active. */
async function connectMember(
  context: CliContext,
  db: import('kysely').Kysely<import('../../warehouse/schema.js').DB>,
  issued: IssuedTokens,
  presentedRefreshToken: string | null,
): Promise<string> {
  const { storeMemberConnection } = await import('../../api/oauth/member-connection.js');
  const { createTokenStore } = await import('../../warehouse/oauth-tokens.js');
  return storeMemberConnection(createTokenStore(db), {
    issued,
    presentedRefreshToken,
    encryptionKey: requireOAuth(context.config(), 'members').encryptionKey.reveal(),
    now: new Date(),
  });
}

/** `rewards-etl members connect | import | list | forget`: the members who connected the app. */
export function membersCommand(context: CliContext): Command {
  return new Command('members')
    .description('members who connected the app: connect (OAuth), import a refresh token, list, forget')
    .addCommand(connectMemberCommand(context))
    .addCommand(importMemberCommand(context))
    .addCommand(listMembersCommand(context))
    .addCommand(forgetMemberCommand(context));
}

function connectMemberCommand(context: CliContext): Command {
  return new Command('connect')
    .description(
      'print an authorize URL (PKCE S256 + state); paste the code from the redirect to connect that member',
    )
    .option('--redirect-uri <uri>', 'a registered redirect URI (default SVC_OAUTH_REDIRECT_URI)')
    .option('--scope <scopes>', 'space-separated scopes', MEMBER_SCOPES.join(' '))
    .action(async (options: { redirectUri?: string; scope: string }) => {
      const oauth = requireOAuth(context.config(), 'members');
      const redirectUri = options.redirectUri ?? oauth.redirectUri;
      if (redirectUri === undefined)
        throw new ConfigError('SVC_OAUTH_REDIRECT_URI', 'required (or pass --redirect-uri)');
      // The warehouse is checked first: a member should not approve only to hear "run migrate".
      const memberId = await withWarehouse(context, async ({ db, endpoint }) => {
        const { url, state, verifier } = startAuthorization({ oauth, redirectUri, scopes: options.scope });
        context.stdout.write(
          `Have the member open this URL and approve:\n  ${url}\n\nstate (check it matches the redirect): ${state}\n`,
        );
        const [code] = await readSecretLines(context.stdin, ['code from the redirect: '], context.stderr);
        if (code === undefined)
          throw new CliExit(ExitCode.usage, 'members connect reads the code from standard input; got none');
        const { retryAfterRateLimits } = await import('../../api/oauth/token-endpoint.js');
        const tokens = await endpoint();
        const issued = await retryAfterRateLimits(() => tokens.exchangeCode({ code, verifier, redirectUri }));
        return connectMember(context, db, issued, null);
      });
      context.stdout.write(`connected member ${memberId}; the members stream syncs them from now on\n`);
    });
}

function importMemberCommand(context: CliContext): Command {
  return new Command('import')
    .description('connect a member from their refresh token (read from standard input), stored encrypted')
    .action(async () => {
      const [refreshToken] = await readSecretLines(context.stdin, ['refresh token: '], context.stderr);
      if (refreshToken === undefined || refreshToken === '')
        throw new CliExit(
          ExitCode.usage,
          'members import reads the refresh token from standard input; got none',
        );
      const memberId = await withWarehouse(context, async ({ db, endpoint }) => {
        // Refreshing once tells whose token it is (the access token's sub) and proves it works.
        const issued = await redeemMemberToken(await endpoint(), refreshToken);
        return connectMember(context, db, issued, refreshToken);
      });
      context.stdout.write(`connected member ${memberId}; the members stream syncs them from now on\n`);
    });
}

/**
 * The member's token, redeemed once. Its failure names `members import` and `members connect`:
 * the API errors' advice (`rewards-etl auth …`) is for the app's own token, not a member's.
 */
async function redeemMemberToken(endpoint: TokenEndpoint, refreshToken: string): Promise<IssuedTokens> {
  const { RefreshTokenRevokedError } = await import('../../api/errors.js');
  try {
    return await endpoint.refresh(refreshToken);
  } catch (error) {
    if (!(error instanceof RefreshTokenRevokedError)) throw error;
    throw new CliExit(
      ExitCode.failed,
      "the token endpoint rejected the member's refresh token (invalid_grant: revoked, expired or already used); nothing was stored: have the member connect again with `rewards-etl members connect`, or import a fresh token with `rewards-etl members import`",
    );
  }
}

function listMembersCommand(context: CliContext): Command {
  return new Command('list')
    .description('connected members: state, scopes, last success and last error')
    .option('--json', 'machine-readable output')
    .action(async (options: { json?: boolean }) => {
      const { listConnections } = await import('../../warehouse/member-connections.js');
      const connections = await withWarehouse(context, ({ db }) => listConnections(db));
      if (options.json === true) {
        context.stdout.write(`${JSON.stringify(connections, null, 2)}\n`);
        return;
      }
      if (connections.length === 0) {
        context.stdout.write('no member has connected yet: rewards-etl members connect\n');
        return;
      }
      const iso = (d: Date | null) => (d === null ? '-' : d.toISOString().slice(0, 19) + 'Z');
      for (const c of connections) {
        context.stdout.write(
          `${c.memberId}  ${c.status.padEnd(12)}  last success ${iso(c.lastSuccessAt)}  ` +
            `scopes ${c.scopes.join(' ') || '-'}${c.lastError === null ? '' : `\n    last error: ${c.lastError}`}\n`,
        );
      }
    });
}

function forgetMemberCommand(context: CliContext): Command {
  return new Command('forget')
    .description("delete a member's rows from every member table and their history, and their tokens")
    .argument('<member-id>', 'the member id (as `members list` shows it)')
    .action(async (memberId: string) => {
      if (!/^[0-9a-f-]{36}$/i.test(memberId))
        throw new CliExit(ExitCode.usage, `"${memberId}" is not a member id (a UUID)`);
      const { forgetMember } = await import('../../warehouse/forget-member.js');
      const removed = await withWarehouse(context, ({ db }) => forgetMember(db, memberId.toLowerCase()));
      const total = Object.values(removed).reduce((sum, n) => sum + n, 0);
      context.stdout.write(
        total === 0
          ? `nothing stored for member ${memberId}\n`
          : `forgot member ${memberId}: ${Object.entries(removed)
              .filter(([, n]) => n > 0)
              .map(([table, n]) => `${table} ${n}`)
              .join(', ')}. Their grant on the partner side is theirs to revoke.\n`,
      );
    });
}
