import type { GeneratedKeyPair, JsonObject, JwsSigner, SigningAlgorithm } from '@trellis/core';
import { exportJWK, exportPKCS8, generateKeyPair, importPKCS8, SignJWT } from 'jose';

/**
 * Job identity tokens (issue 16) with `jose`: RS256 (RSA 2048) or ES256 (P-256) key pairs, the
 * private key kept as PKCS#8 PEM (sealed by core before it is stored), compact JWS out.
 */
export class JoseJwsSigner implements JwsSigner {
  async generate(algorithm: SigningAlgorithm): Promise<GeneratedKeyPair> {
    const { publicKey, privateKey } = await generateKeyPair(algorithm, {
      extractable: true,
      ...(algorithm === 'RS256' ? { modulusLength: 2048 } : {}),
    });
    const jwk = await exportJWK(publicKey);
    return { publicJwk: jwk as JsonObject, privateKeyPem: await exportPKCS8(privateKey) };
  }

  async sign(
    claims: JsonObject,
    key: { kid: string; algorithm: SigningAlgorithm; privateKeyPem: string },
  ): Promise<string> {
    const privateKey = await importPKCS8(key.privateKeyPem, key.algorithm);
    return new SignJWT(claims).setProtectedHeader({ alg: key.algorithm, kid: key.kid, typ: 'JWT' }).sign(privateKey);
  }
}
