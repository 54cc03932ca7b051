import type { JsonObject, SigningAlgorithm } from '../domain/records.js';

/** A freshly generated asymmetric key pair: the public JWK and the private key as PKCS#8 PEM. */
export interface GeneratedKeyPair {
  publicJwk: JsonObject;
  privateKeyPem: string;
}

/** Asymmetric JWS (issue 16): key generation and compact signing of job identity tokens. */
export interface JwsSigner {
  generate(algorithm: SigningAlgorithm): Promise<GeneratedKeyPair>;
  sign(claims: JsonObject, key: { kid: string; algorithm: SigningAlgorithm; privateKeyPem: string }): Promise<string>;
}
