// The decoder alone: the package's index loads all of JOSE (8 MB of a worker's RSS, issue 39).
import { decodeJwt } from 'jose/jwt/decode';
import { encryptToken } from './token-crypto.js';
import type { IssuedTokens } from './token-endpoint.js';
import { ACCESS_TOKEN_AAD, REFRESH_TOKEN_AAD } from './token-manager.js';
import type { TokenStore } from './token-store.js';

/** The token row of a member's connection in rewards.oauth_tokens. */
export const memberTokenRow = (memberId: string): string => `member:${memberId.toLowerCase()}`;

/**
 * The member a token speaks for (its `sub`, the member id on every member route) and the scopes it
 * carries, read from the access token. Not a verification: the token came from the token endpoint
 * over TLS just now, and the partner API checks it on every call.
 */
export function tokenSubject(accessToken: string): { memberId: string; scopes: string[] } {
  const claims = decodeJwt(accessToken);
  if (typeof claims.sub !== 'string' || claims.sub === '')
    throw new Error('the access token names no member (no `sub` claim)');
  const scope = typeof claims['scope'] === 'string' ? claims['scope'] : '';
  return { memberId: claims.sub.toLowerCase(), scopes: scope.split(/\s+/).filter((s) => s !== '') };
}

/**
 * Stores a member's freshly issued tokens, encrypted, under their own row, and marks the connection
 * active, in one transaction. Returns the member id.
 */
export async function storeMemberConnection(
  store: TokenStore,
  input: { issued: IssuedTokens; presentedRefreshToken: string | null; encryptionKey: Buffer; now: Date },
): Promise<string> {
  const refreshToken = input.issued.refreshToken ?? input.presentedRefreshToken;
  if (refreshToken === null) throw new Error('the token endpoint returned no refresh token');
  const { memberId, scopes } = tokenSubject(input.issued.accessToken);
  const row = memberTokenRow(memberId);
  await store.replaceMemberGrant(
    row,
    {
      refreshSealed: encryptToken(input.encryptionKey, refreshToken, REFRESH_TOKEN_AAD(row)),
      accessSealed: encryptToken(input.encryptionKey, input.issued.accessToken, ACCESS_TOKEN_AAD(row)),
      accessExpiresAt: input.issued.accessTokenExpiresAt,
      now: input.now,
    },
    { memberId, scopes, at: input.now },
  );
  return memberId;
}
