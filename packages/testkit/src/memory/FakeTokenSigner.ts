import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  type Clock,
  REQUIRED_CLAIMS,
  TOKEN_AUDIENCE,
  TOKEN_ISSUER,
  type TokenClaims,
  type TokenSigner,
  type TokenType,
  UnauthorizedError,
} from '@trellis/core';

export const DEFAULT_TEST_JWT_SECRET = 'trellis-test-secret-at-least-32-bytes-long';

const HEADER = { alg: 'HS256', typ: 'JWT' };

function encode(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

function decode(part: string): unknown {
  if (!/^[A-Za-z0-9_-]*$/.test(part)) throw new Error('not base64url');
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Real HS256 JWTs with `node:crypto` alone: what the production signer must do, small enough to
 * read. Every failure is `UnauthorizedError('invalid_token')`.
 */
export class FakeTokenSigner implements TokenSigner {
  private readonly secret: Buffer;

  constructor(
    private readonly clock: Clock,
    secret: string | Uint8Array = DEFAULT_TEST_JWT_SECRET,
  ) {
    this.secret = Buffer.from(secret);
  }

  sign(claims: TokenClaims): string {
    const body = `${encode(HEADER)}.${encode({ ...claims, iss: TOKEN_ISSUER, aud: TOKEN_AUDIENCE })}`;
    return `${body}.${this.mac(body).toString('base64url')}`;
  }

  verify(token: string, expectedType: TokenType): TokenClaims {
    const refuse = (why: string) => new UnauthorizedError('invalid_token', `the token is not valid: ${why}`);
    if (typeof token !== 'string') throw refuse('not a string');
    const parts = token.split('.');
    if (parts.length !== 3) throw refuse('malformed');
    const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
    let header: unknown;
    let payload: unknown;
    try {
      header = decode(headerPart);
      payload = decode(payloadPart);
    } catch {
      throw refuse('malformed');
    }
    if (!isObject(header) || header.alg !== 'HS256') throw refuse('algorithm');
    if (!/^[A-Za-z0-9_-]+$/.test(signaturePart)) throw refuse('signature');
    const given = Buffer.from(signaturePart, 'base64url');
    const expected = this.mac(`${headerPart}.${payloadPart}`);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw refuse('signature');
    if (!isObject(payload)) throw refuse('payload');
    for (const claim of REQUIRED_CLAIMS) {
      if (!(claim in payload)) throw refuse(`missing ${claim}`);
    }
    if (payload.iss !== TOKEN_ISSUER) throw refuse('issuer');
    if (payload.aud !== TOKEN_AUDIENCE) throw refuse('audience');
    if (typeof payload.exp !== 'number' || this.clock.now().getTime() / 1000 >= payload.exp) throw refuse('expired');
    if (payload.type !== expectedType) throw refuse('type');
    if (typeof payload.sub !== 'string' || typeof payload.email !== 'string') throw refuse('subject');
    const { iss: _iss, aud: _aud, ...claims } = payload;
    return claims as unknown as TokenClaims;
  }

  private mac(data: string): Buffer {
    return createHmac('sha256', this.secret).update(data).digest();
  }
}
