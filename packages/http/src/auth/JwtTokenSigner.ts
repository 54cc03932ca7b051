import {
  type Clock,
  TOKEN_AUDIENCE,
  TOKEN_ISSUER,
  type TokenClaims,
  type TokenSigner,
  type TokenType,
  UnauthorizedError,
} from '@trellis/core';
import jwt from 'jsonwebtoken';

/** SPEC §5.3: `CLI_JWT_SECRET` must be at least 32 bytes. */
export const MIN_JWT_SECRET_BYTES = 32;

/**
 * The CLI's tokens: HS256 only (an `alg: none` or RS256 token is refused), with `iss`, `aud`,
 * `exp` and `type` checked on every verification.
 */
export class JwtTokenSigner implements TokenSigner {
  constructor(
    private readonly secret: string,
    private readonly clock: Clock,
  ) {
    if (Buffer.byteLength(secret, 'utf8') < MIN_JWT_SECRET_BYTES) {
      throw new Error(`CLI_JWT_SECRET must be at least ${MIN_JWT_SECRET_BYTES} bytes`);
    }
  }

  sign(claims: TokenClaims): string {
    return jwt.sign({ ...claims }, this.secret, {
      algorithm: 'HS256',
      issuer: TOKEN_ISSUER,
      audience: TOKEN_AUDIENCE,
      noTimestamp: true,
    });
  }

  verify(token: string, expectedType: TokenType): TokenClaims {
    let payload: string | jwt.JwtPayload;
    try {
      payload = jwt.verify(token, this.secret, {
        algorithms: ['HS256'],
        issuer: TOKEN_ISSUER,
        audience: TOKEN_AUDIENCE,
        clockTimestamp: Math.floor(this.clock.now().getTime() / 1000),
      });
    } catch (error) {
      const expired = error instanceof jwt.TokenExpiredError;
      throw new UnauthorizedError(
        expired ? 'token_expired' : 'invalid_token',
        expired ? 'the token has expired' : 'the token is not valid',
        { cause: error },
      );
    }
    if (
      typeof payload !== 'object' ||
      typeof payload.sub !== 'string' ||
      typeof payload.email !== 'string' ||
      typeof payload.exp !== 'number' ||
      payload.type !== expectedType
    ) {
      throw new UnauthorizedError('invalid_token', `the token is not a valid ${expectedType} token`);
    }
    return {
      sub: payload.sub,
      email: payload.email,
      type: payload.type,
      iat: typeof payload.iat === 'number' ? payload.iat : 0,
      exp: payload.exp,
      ...(typeof payload.jti === 'string' ? { jti: payload.jti } : {}),
      ...(typeof payload.fam === 'string' ? { fam: payload.fam } : {}),
    };
  }
}
