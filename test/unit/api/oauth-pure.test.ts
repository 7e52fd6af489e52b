import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  authorizeEndpointFor,
  buildAuthorizeUrl,
  codeChallengeS256,
  createPkcePair,
} from '../../../src/api/oauth/pkce.js';
import { decryptToken, encryptToken, TokenDecryptionError } from '../../../src/api/oauth/token-crypto.js';
import { accessTokenExpiry } from '../../../src/api/oauth/token-endpoint.js';

describe('token encryption (AES-256-GCM)', () => {
  const key = randomBytes(32);

  it('round-trips any token and never stores it in clear', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 300 }), (token) => {
        const sealed = encryptToken(key, token, 'row:refresh');
        expect(decryptToken(key, sealed, 'row:refresh')).toBe(token);
        if (token.length >= 8) expect(sealed).not.toContain(token);
      }),
    );
  });

  it('refuses another key, another column, or a tampered value', () => {
    const sealed = encryptToken(key, 'rt_secret_value', 'row:refresh');
    expect(() => decryptToken(randomBytes(32), sealed, 'row:refresh')).toThrow(TokenDecryptionError);
    expect(() => decryptToken(key, sealed, 'row:access')).toThrow(TokenDecryptionError);
    const tampered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
    expect(() => decryptToken(key, tampered, 'row:refresh')).toThrow(TokenDecryptionError);
  });

  it('GCM tags are 16 bytes: a truncated (or padded) tag is refused, even a genuine prefix', () => {
    const sealed = encryptToken(key, 'rt_secret_value', 'row:refresh');
    const [version, iv, tag, ciphertext] = sealed.split('.') as [string, string, string, string];
    const tagBytes = Buffer.from(tag, 'base64url');
    expect(tagBytes).toHaveLength(16);
    for (const length of [4, 8, 12, 15]) {
      const truncated = [version, iv, tagBytes.subarray(0, length).toString('base64url'), ciphertext].join(
        '.',
      );
      expect(() => decryptToken(key, truncated, 'row:refresh')).toThrow(TokenDecryptionError);
    }
    const padded = [
      version,
      iv,
      Buffer.concat([tagBytes, Buffer.alloc(1)]).toString('base64url'),
      ciphertext,
    ];
    expect(() => decryptToken(key, padded.join('.'), 'row:refresh')).toThrow(TokenDecryptionError);
  });
});

describe('PKCE', () => {
  it('S256 challenge of the RFC 7636 example', () => {
    expect(codeChallengeS256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });

  it('makes a verifier of 43 base64url characters and an authorize URL carrying S256 and state', () => {
    const pair = createPkcePair();
    expect(pair.verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const url = new URL(
      buildAuthorizeUrl({
        authorizeEndpoint: authorizeEndpointFor('https://api.example.test/v1/oauth/token'),
        clientId: 'client',
        redirectUri: 'https://app.example.test/cb',
        scopes: ['read:profile', 'read:wallets'],
        state: 'st',
        codeChallenge: pair.challenge,
      }),
    );
    expect(url.pathname).toBe('/v1/oauth/authorize');
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: 'code',
      code_challenge_method: 'S256',
      code_challenge: pair.challenge,
      state: 'st',
      scope: 'read:profile read:wallets',
    });
  });
});

describe('accessTokenExpiry', () => {
  it('prefers the JWT exp claim over expires_in', async () => {
    const exp = 1_900_000_000;
    const jwt = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(exp)
      .sign(randomBytes(32));
    expect(accessTokenExpiry(jwt, 10, 0).getTime()).toBe(exp * 1000);
  });

  it('falls back to expires_in for an opaque token', () => {
    expect(accessTokenExpiry('opaque', 60, 1000).getTime()).toBe(61_000);
  });
});
