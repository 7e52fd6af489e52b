import { SignJWT, jwtVerify } from 'jose';
import type { SimulatorClock } from './clock.js';
import { createPrng, type Prng } from './prng.js';

/** API keys, authorization codes, refresh tokens and JWT signing for the simulated partner. */

export const API_KEY_SCOPES = ['read:checkins', 'read:restaurant_challenges', 'read:balance'] as const;
export const ACCESS_TOKEN_TTL_MS = 60 * 60_000;
export const REFRESH_TOKEN_TTL_MS = 30 * 86_400_000;
const CODE_TTL_MS = 10 * 60_000;
const VERIFIED_TOKENS_KEPT = 50_000;

export interface ApiKeyRecord {
  key: string;
  scopes: string[];
  revoked: boolean;
}

export interface RefreshTokenRecord {
  memberId: string;
  clientId: string;
  scopes: string[];
  expiresAtMs: number;
  /** Set when rotated or revoked; any later use is invalid_grant. */
  invalidated: boolean;
}

export interface AuthorizationCode {
  memberId: string;
  clientId: string;
  redirectUri: string;
  scopes: string[];
  codeChallenge: string;
  expiresAtMs: number;
  used: boolean;
}

export interface BearerClaims {
  memberId: string;
  scopes: string[];
}

export interface TokenSet {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

export class CredentialStore {
  readonly apiKeys = new Map<string, ApiKeyRecord>();
  readonly refreshTokens = new Map<string, RefreshTokenRecord>();
  readonly codes = new Map<string, AuthorizationCode>();
  readonly adminToken: string;
  private readonly rng: Prng;
  private readonly verified = new Map<string, { claims: BearerClaims; expiresAtMs: number }>();
  private readonly jwtKey: Uint8Array;

  constructor(
    seed: number,
    private readonly clock: SimulatorClock,
  ) {
    this.rng = createPrng(seed, 'credentials');
    this.jwtKey = new TextEncoder().encode(`sim-jwt-${this.rng.alphanumeric(40)}`);
    this.adminToken = `adm_test_${this.rng.alphanumeric(32)}`;
  }

  /** 40 characters: the `sk_test_` prefix marks a staging key. */
  mintApiKey(scopes: readonly string[]): string {
    const key = `sk_test_${this.rng.alphanumeric(32)}`;
    this.apiKeys.set(key, { key, scopes: [...scopes], revoked: false });
    return key;
  }

  revokeApiKey(key: string): boolean {
    const record = this.apiKeys.get(key);
    if (record) record.revoked = true;
    return record !== undefined;
  }

  mintRefreshToken(memberId: string, clientId: string, scopes: readonly string[]): string {
    const token = `rt_${this.rng.alphanumeric(48)}`;
    this.refreshTokens.set(token, {
      memberId,
      clientId,
      scopes: [...scopes],
      expiresAtMs: this.clock.nowMs() + REFRESH_TOKEN_TTL_MS,
      invalidated: false,
    });
    return token;
  }

  revokeRefreshToken(token: string): boolean {
    const record = this.refreshTokens.get(token);
    if (record) record.invalidated = true;
    return record !== undefined;
  }

  /** Revokes every refresh token of a member (e.g. the member disconnected the app). */
  revokeRefreshTokensOf(memberId: string): number {
    let count = 0;
    for (const record of this.refreshTokens.values())
      if (record.memberId === memberId && !record.invalidated) {
        record.invalidated = true;
        count++;
      }
    return count;
  }

  mintCode(grant: Omit<AuthorizationCode, 'expiresAtMs' | 'used'>): string {
    const code = `ac_${this.rng.alphanumeric(32)}`;
    this.codes.set(code, { ...grant, expiresAtMs: this.clock.nowMs() + CODE_TTL_MS, used: false });
    return code;
  }

  async signAccessToken(memberId: string, clientId: string, scopes: readonly string[]): Promise<string> {
    const nowSeconds = Math.floor(this.clock.nowMs() / 1000);
    return new SignJWT({ scope: scopes.join(' '), client_id: clientId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(memberId)
      .setIssuedAt(nowSeconds)
      .setExpirationTime(nowSeconds + ACCESS_TOKEN_TTL_MS / 1000)
      .setJti(this.rng.uuid())
      .sign(this.jwtKey);
  }

  /**
   * Verifies against the simulator clock, so advancing it past `exp` expires tokens. A token verified
   * once is remembered with its expiry (a signature does not change), so a benchmark's hundreds of
   * thousands of requests with the same few tokens cost one HMAC each, not one per request.
   */
  async verifyAccessToken(token: string): Promise<BearerClaims | null> {
    const known = this.verified.get(token);
    if (known) return known.expiresAtMs > this.clock.nowMs() ? known.claims : null;
    try {
      const { payload } = await jwtVerify(token, this.jwtKey, {
        algorithms: ['HS256'],
        currentDate: this.clock.now(),
      });
      if (typeof payload.sub !== 'string' || typeof payload.exp !== 'number') return null;
      const scope = typeof payload['scope'] === 'string' ? payload['scope'] : '';
      const claims = { memberId: payload.sub, scopes: scope.split(' ').filter((s) => s !== '') };
      if (this.verified.size >= VERIFIED_TOKENS_KEPT) this.verified.clear();
      this.verified.set(token, { claims, expiresAtMs: payload.exp * 1000 });
      return claims;
    } catch {
      return null;
    }
  }

  async issueTokens(memberId: string, clientId: string, scopes: readonly string[]): Promise<TokenSet> {
    return {
      access_token: await this.signAccessToken(memberId, clientId, scopes),
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_MS / 1000,
      refresh_token: this.mintRefreshToken(memberId, clientId, scopes),
      scope: scopes.join(' '),
    };
  }
}
