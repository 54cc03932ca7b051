import { type PgpPublicKeyInfo, type PgpVerifier, ValidationError } from '@trellis/core';
import type * as OpenPgp from 'openpgp';

/**
 * openpgp.js (one 1.2 MB module) is loaded by the first key or signature checked, not with the
 * server (issue 31: a registry without GPG keys never needs it).
 */
let loaded: Promise<typeof OpenPgp> | null = null;
function loadOpenPgp(): Promise<typeof OpenPgp> {
  loaded ??= import('openpgp');
  return loaded;
}

function invalidKey(why: string): ValidationError {
  return new ValidationError(
    `not an ASCII-armored GPG public key: ${why}`,
    [{ path: 'ascii_armor', message: why }],
    'gpg_key_invalid',
  );
}

/**
 * The registry's OpenPGP (issue 28) with openpgp.js: the key id of an armored public key, and
 * which of a namespace's keys made a detached signature of a provider's `SHA256SUMS` (a signing
 * subkey counts for its primary key, as the stock CLI's check does).
 */
export class OpenPgpVerifier implements PgpVerifier {
  async readPublicKey(asciiArmor: string): Promise<PgpPublicKeyInfo> {
    const openpgp = await loadOpenPgp();
    let keys: OpenPgp.Key[];
    try {
      keys = await openpgp.readKeys({ armoredKeys: asciiArmor });
    } catch (error) {
      throw invalidKey(error instanceof Error ? error.message : String(error));
    }
    if (keys.length !== 1) throw invalidKey(`it holds ${keys.length} keys; add them one at a time`);
    const [key] = keys as [OpenPgp.Key];
    if (key.isPrivate()) throw invalidKey('it is a private key; export the public key (gpg --armor --export KEYID)');
    return { key_id: key.getKeyID().toHex().toUpperCase(), fingerprint: key.getFingerprint().toUpperCase() };
  }

  async verifyDetached(
    data: Uint8Array,
    signature: Uint8Array,
    armoredKeys: readonly string[],
  ): Promise<{ key_id: string; signature: Uint8Array } | null> {
    const openpgp = await loadOpenPgp();
    let parsed: OpenPgp.Signature;
    try {
      const text = Buffer.from(signature).toString('latin1');
      parsed = text.trimStart().startsWith('-----BEGIN PGP SIGNATURE-----')
        ? await openpgp.readSignature({ armoredSignature: text })
        : await openpgp.readSignature({ binarySignature: signature });
    } catch {
      return null;
    }
    const keys = (
      await Promise.all(armoredKeys.map((armoredKey) => openpgp.readKey({ armoredKey }).catch(() => null)))
    ).filter((key): key is OpenPgp.Key => key !== null);
    if (keys.length === 0) return null;
    const message = await openpgp.createMessage({ binary: data });
    const result = await openpgp.verify({ message, signature: parsed, verificationKeys: keys });
    for (const checked of result.signatures) {
      try {
        await checked.verified;
      } catch {
        continue;
      }
      const signer = keys.find((key) => key.getKeys(checked.keyID).length > 0);
      if (signer) return { key_id: signer.getKeyID().toHex().toUpperCase(), signature: parsed.write() as Uint8Array };
    }
    return null;
  }
}
