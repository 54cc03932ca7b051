import type { TokenClaims, TokenType } from '../ports/TokenSigner.js';

/** SPEC §5.3 and §8. */
export const ACCESS_TOKEN_TTL_SECONDS = 60 * 60;
export const REFRESH_TOKEN_TTL_SECONDS = 90 * 24 * 60 * 60;

/** The issuer and audience every CLI token carries; the signer pins both. */
export const TOKEN_ISSUER = 'trellis';
export const TOKEN_AUDIENCE = 'trellis-cli';

/** Claims a verified token must carry, whatever its type. */
export const REQUIRED_CLAIMS = ['sub', 'email', 'type', 'iss', 'aud', 'exp'] as const;

export function tokenClaims(
  type: TokenType,
  user: { id: string; email: string },
  now: Date,
  refresh?: { jti: string; fam: string },
): TokenClaims {
  const iat = Math.floor(now.getTime() / 1000);
  const ttl = type === 'access' ? ACCESS_TOKEN_TTL_SECONDS : REFRESH_TOKEN_TTL_SECONDS;
  return { sub: user.id, email: user.email, type, iat, exp: iat + ttl, ...refresh };
}
