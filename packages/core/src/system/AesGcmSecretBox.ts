import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { UnauthorizedError } from '../domain/errors.js';
import type { SecretBox } from '../ports/SecretBox.js';

const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

function keyId(key: Uint8Array): string {
  return createHash('sha256').update(key).digest('base64url').slice(0, 8);
}

/**
 * AES-256-GCM with a fresh 96-bit IV per value; the context is the additional authenticated data.
 * Sealed form: `v1.<key id>.<iv>.<ciphertext>.<tag>` (base64url). The first key seals; every key
 * opens, so a key can be rotated by putting the new one first and keeping the old one behind it.
 */
export class AesGcmSecretBox implements SecretBox {
  private readonly keys: ReadonlyMap<string, Uint8Array>;
  private readonly sealingKeyId: string;

  constructor(keys: readonly Uint8Array[]) {
    if (keys.length === 0) throw new Error('AesGcmSecretBox needs at least one key');
    for (const key of keys) {
      if (key.length !== KEY_BYTES) throw new Error(`an encryption key must be ${KEY_BYTES} bytes, got ${key.length}`);
    }
    this.keys = new Map(keys.map((key) => [keyId(key), key]));
    this.sealingKeyId = keyId(keys[0] as Uint8Array);
  }

  /** A box whose only key is derived (HKDF-SHA256) from a server secret such as `CLI_JWT_SECRET`. */
  static fromSecret(secret: string, purpose = 'trellis provider tokens v1'): AesGcmSecretBox {
    return new AesGcmSecretBox([new Uint8Array(hkdfSync('sha256', secret, 'trellis', purpose, KEY_BYTES))]);
  }

  async seal(plaintext: string, context: string): Promise<string> {
    const key = this.keys.get(this.sealingKeyId) as Uint8Array;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, this.sealingKeyId, iv, ciphertext, cipher.getAuthTag()]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  async open(sealed: string, context: string): Promise<string> {
    const [version, id, iv, ciphertext, tag, ...rest] = sealed.split('.');
    const key = id === undefined ? undefined : this.keys.get(id);
    if (version !== VERSION || !key || iv === undefined || ciphertext === undefined || !tag || rest.length > 0) {
      throw unreadable();
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch (error) {
      throw unreadable(error);
    }
  }
}

function unreadable(cause?: unknown): UnauthorizedError {
  return new UnauthorizedError(
    'secret_unreadable',
    'a stored secret cannot be decrypted (tampered with, or sealed with another key)',
    { cause },
  );
}
