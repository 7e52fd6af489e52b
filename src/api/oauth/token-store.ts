// What the OAuth layer needs of the place its tokens are kept: a narrow interface, implemented over
// `rewards.oauth_tokens` in src/warehouse/oauth-tokens.ts. Values are already sealed
// (token-crypto.ts) when they reach the store.

export const DEFAULT_TOKEN_ROW = 'default';

/** `last_error` prefix that marks a revoked refresh token: no more calls until re-authorized. */
export const INVALID_GRANT_MARK = 'invalid_grant';

export interface StoredTokens {
  refreshTokenSealed: string | null;
  accessTokenSealed: string | null;
  accessTokenExpiresAt: Date | null;
  generation: number;
  lastRefreshedAt: Date | null;
  lastError: string | null;
  lastErrorAt: Date | null;
}

/** A grant the operator (or a member) just gave: it replaces whatever was stored. */
export interface ReplacedTokens {
  refreshSealed: string;
  accessSealed: string | null;
  accessExpiresAt: Date | null;
  now: Date;
}

/** The result of one refresh, saved under the row's lock. */
export interface RefreshedTokens {
  refreshSealed: string;
  accessSealed: string;
  accessExpiresAt: Date;
  now: Date;
}

/** Writes allowed while a row's lock is held; they commit when the lock is released. */
export interface LockedTokenRow {
  saveRefreshed(values: RefreshedTokens): Promise<void>;
  recordError(message: string, now: Date): Promise<void>;
}

export interface TokenStore {
  read(row: string): Promise<StoredTokens | null>;
  /** First import (SVC_OAUTH_REFRESH_TOKEN): only when no row exists, so a rotated token is never replaced. */
  insertRefreshTokenIfAbsent(row: string, refreshSealed: string, now: Date): Promise<boolean>;
  /** `auth import` / `auth exchange`: the operator's new grant replaces whatever was stored. */
  replace(row: string, values: ReplacedTokens): Promise<void>;
  /**
   * Runs `work` holding the row's lock: the distributed lock under which exactly one process
   * refreshes. What `work` writes through `locked` commits when it returns.
   */
  withRowLock<T>(
    row: string,
    work: (stored: StoredTokens | null, locked: LockedTokenRow) => Promise<T>,
  ): Promise<T>;
  /** A member's new grant and their connection marked active, in one transaction. */
  replaceMemberGrant(
    row: string,
    values: ReplacedTokens,
    connection: { memberId: string; scopes: string[]; at: Date },
  ): Promise<void>;
}
