export type TokenType = 'access' | 'refresh';

/** Claims of the CLI's JWTs (SPEC §5.3). `iss` and `aud` are fixed by the signer. */
export interface TokenClaims {
  sub: string;
  email: string;
  type: TokenType;
  /** Seconds since the epoch. */
  iat: number;
  exp: number;
  /** Refresh tokens only: the record id and its rotation family. */
  jti?: string;
  fam?: string;
}

/**
 * Signs and verifies CLI tokens. `verify` checks signature, algorithm, issuer, audience, expiry
 * and that the token is of `expectedType`; any failure is an `UnauthorizedError`.
 */
export interface TokenSigner {
  sign(claims: TokenClaims): string;
  verify(token: string, expectedType: TokenType): TokenClaims;
}
