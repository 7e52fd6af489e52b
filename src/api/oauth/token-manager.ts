import type { Logger } from '../../log.js';
import type { AccessTokenProvider } from '../api-requester.js';
import { OAuthNotAuthorizedError, PartnerApiError, RefreshTokenRevokedError } from '../errors.js';
import type { ApiMetrics } from '../metrics.js';
import { decryptToken, encryptToken } from './token-crypto.js';
import { retryAfterRateLimits, type TokenEndpoint } from './token-endpoint.js';
import { DEFAULT_TOKEN_ROW, INVALID_GRANT_MARK, type StoredTokens, type TokenStore } from './token-store.js';
import { REFRESH_BEFORE_EXPIRY_MS } from '../../sync/member-token-refresh.js';

// Bearer tokens for every process, from one row of the token store (`rewards.oauth_tokens`).
//
// Correctness argument for rotation (each refresh spends the refresh token it presents):
// - Refreshes happen only under the row's lock (`select … for update`), and the holder re-reads the row
//   after taking the lock: if another process refreshed meanwhile (a valid access token that is
//   not the one we saw rejected), it uses that one and never presents the spent refresh token. So
//   any number of processes refresh once and all use the result.
// - The rotated refresh token is written and committed right after the token response, before the
//   new access token is handed to anyone. A crash after the commit loses nothing.
// - Honest limit: a crash (or lost connection) after the server rotated but before our commit loses
//   the new refresh token, and the old one is spent server-side: the next refresh gets invalid_grant
//   and the operator must re-authorize. The window is one HTTP response plus one UPDATE and COMMIT.

export interface TokenManagerOptions {
  store: TokenStore;
  endpoint: TokenEndpoint;
  encryptionKey: Buffer;
  /** SVC_OAUTH_REFRESH_TOKEN, imported only when the store has no row. */
  initialRefreshToken?: string | undefined;
  logger: Logger;
  metrics?: ApiMetrics | undefined;
  nowMs?: () => number;
  rowId?: string;
  /** Refresh this long before `exp`, so a token never expires in flight. */
  refreshBeforeExpiryMs?: number;
  /** 429s from the token endpoint waited out (outside the row lock) before giving up. */
  maxRateLimitWaits?: number;
  /**
   * Runs right after the refreshed tokens are committed: the members pass counts refreshes with it,
   * and tests crash here (which must recover).
   */
  afterRefreshCommitted?: (() => void | Promise<void>) | undefined;
}

export const REFRESH_TOKEN_AAD = (row: string) => `rewards.oauth_tokens:${row}:refresh_token`;
export const ACCESS_TOKEN_AAD = (row: string) => `rewards.oauth_tokens:${row}:access_token`;

export class OAuthTokenManager implements AccessTokenProvider {
  readonly #options: TokenManagerOptions;
  readonly #row: string;
  readonly #nowMs: () => number;
  readonly #skewMs: number;
  /** One refresh in flight per process; the row lock covers the other processes. */
  #inflight: Promise<string> | null = null;

  constructor(options: TokenManagerOptions) {
    this.#options = options;
    this.#row = options.rowId ?? DEFAULT_TOKEN_ROW;
    this.#nowMs = options.nowMs ?? Date.now;
    this.#skewMs = options.refreshBeforeExpiryMs ?? REFRESH_BEFORE_EXPIRY_MS;
  }

  async getAccessToken(signal?: AbortSignal): Promise<string> {
    const stored = await this.#readOrImport();
    const current = this.#usableAccessToken(stored, null);
    if (current !== null) return current;
    return this.#refresh(null, signal);
  }

  async refreshAfterRejection(rejected: string, signal?: AbortSignal): Promise<string> {
    return this.#refresh(rejected, signal);
  }

  async #readOrImport(): Promise<StoredTokens> {
    const { store, initialRefreshToken, encryptionKey } = this.#options;
    let stored = await store.read(this.#row);
    if (stored === null && initialRefreshToken !== undefined) {
      const sealed = encryptToken(encryptionKey, initialRefreshToken, REFRESH_TOKEN_AAD(this.#row));
      if (await store.insertRefreshTokenIfAbsent(this.#row, sealed, new Date(this.#nowMs()))) {
        this.#options.logger.info('imported SVC_OAUTH_REFRESH_TOKEN into the token store');
      }
      stored = await store.read(this.#row);
    }
    return this.#checkAuthorized(stored);
  }

  #checkAuthorized(stored: StoredTokens | null): StoredTokens {
    if (stored?.refreshTokenSealed == null) {
      throw new OAuthNotAuthorizedError('no OAuth refresh token is stored');
    }
    // A revoked token stays revoked: fail fast instead of asking the server again on every job.
    if (stored.lastError?.startsWith(INVALID_GRANT_MARK)) throw new RefreshTokenRevokedError();
    return stored;
  }

  #usableAccessToken(stored: StoredTokens, rejected: string | null): string | null {
    if (stored.accessTokenSealed === null || stored.accessTokenExpiresAt === null) return null;
    if (stored.accessTokenExpiresAt.getTime() - this.#skewMs <= this.#nowMs()) return null;
    const token = decryptToken(
      this.#options.encryptionKey,
      stored.accessTokenSealed,
      ACCESS_TOKEN_AAD(this.#row),
    );
    return token === rejected ? null : token;
  }

  #refresh(rejected: string | null, signal: AbortSignal | undefined): Promise<string> {
    // A 429 ends the locked attempt (and its transaction) first; the wait happens after, unlocked.
    this.#inflight ??= retryAfterRateLimits(() => this.#refreshUnderLock(rejected, signal), {
      maxWaits: this.#options.maxRateLimitWaits ?? 5,
      signal,
    }).finally(() => {
      this.#inflight = null;
    });
    return this.#inflight;
  }

  async #refreshUnderLock(rejected: string | null, signal: AbortSignal | undefined): Promise<string> {
    await this.#readOrImport();
    const { store, endpoint, encryptionKey, logger, metrics } = this.#options;
    const outcome = await store.withRowLock(this.#row, async (locked, row) => {
      const stored = this.#checkAuthorized(locked);
      // Another process may have refreshed while we waited for the lock.
      const fresh = this.#usableAccessToken(stored, rejected);
      if (fresh !== null) return { ok: true as const, accessToken: fresh, refreshed: false };
      const refreshToken = decryptToken(
        encryptionKey,
        stored.refreshTokenSealed!,
        REFRESH_TOKEN_AAD(this.#row),
      );
      try {
        const issued = await endpoint.refresh(refreshToken, signal);
        await row.saveRefreshed({
          refreshSealed: encryptToken(
            encryptionKey,
            issued.refreshToken ?? refreshToken,
            REFRESH_TOKEN_AAD(this.#row),
          ),
          accessSealed: encryptToken(encryptionKey, issued.accessToken, ACCESS_TOKEN_AAD(this.#row)),
          accessExpiresAt: issued.accessTokenExpiresAt,
          now: new Date(this.#nowMs()),
        });
        return { ok: true as const, accessToken: issued.accessToken, refreshed: true };
      } catch (error) {
        const revoked = error instanceof RefreshTokenRevokedError;
        const message = revoked
          ? `${INVALID_GRANT_MARK}: the refresh token was rejected; run \`rewards-etl auth\``
          : `refresh failed: ${error instanceof PartnerApiError ? error.name : 'error'}: ${(error as Error).message}`;
        await row.recordError(message, new Date(this.#nowMs()));
        return { ok: false as const, error, revoked };
      }
    });
    if (!outcome.ok) {
      metrics?.tokenRefreshed(outcome.revoked ? 'revoked' : 'failed');
      logger.error(
        { err: outcome.error },
        outcome.revoked ? 'OAuth refresh token revoked' : 'OAuth token refresh failed',
      );
      throw outcome.error;
    }
    if (outcome.refreshed) {
      metrics?.tokenRefreshed('ok');
      logger.info('OAuth access token refreshed; rotated refresh token committed');
      await this.#options.afterRefreshCommitted?.();
    }
    return outcome.accessToken;
  }
}
