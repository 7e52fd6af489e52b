import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

// Tokens at rest: AES-256-GCM with TOKEN_ENCRYPTION_KEY, a fresh 96-bit IV per value, and the
// row/column as associated data so a ciphertext copied into another column or row fails to open.
// Format: `v1.<iv>.<tag>.<ciphertext>`, each base64url.

const VERSION = 'v1';
// GCM also accepts truncated tags (down to 4 bytes) unless told the length: a forger would then
// need only 2^32 tries. Always the full 16 bytes, on both sides.
const AUTH_TAG_LENGTH = 16;

export function encryptToken(key: Buffer, plaintext: string, associatedData: string): string {
  if (key.length !== 32) throw new Error('the token encryption key must be 32 bytes');
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: AUTH_TAG_LENGTH });
  cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [
    VERSION,
    iv.toString('base64url'),
    tag.toString('base64url'),
    ciphertext.toString('base64url'),
  ].join('.');
}

export class TokenDecryptionError extends Error {
  override readonly name = 'TokenDecryptionError';
  constructor(cause?: unknown) {
    super(
      'a stored OAuth token could not be decrypted: was TOKEN_ENCRYPTION_KEY changed? re-run `rewards-etl auth`',
      {
        cause,
      },
    );
  }
}

export function decryptToken(key: Buffer, sealed: string, associatedData: string): string {
  const [version, iv, tag, ciphertext] = sealed.split('.');
  if (version !== VERSION || iv === undefined || tag === undefined || ciphertext === undefined) {
    throw new TokenDecryptionError();
  }
  const tagBytes = Buffer.from(tag, 'base64url');
  if (tagBytes.length !== AUTH_TAG_LENGTH) throw new TokenDecryptionError();
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), {
      authTagLength: AUTH_TAG_LENGTH,
    });
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(tagBytes);
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString(
      'utf8',
    );
  } catch (error) {
    throw new TokenDecryptionError(error);
  }
}
