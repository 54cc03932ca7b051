import { createHmac, timingSafeEqual } from 'node:crypto';
import { UnauthorizedError } from '../domain/errors.js';
import type { JsonObject } from '../domain/records.js';
import type { Clock } from '../ports/Clock.js';

/** The query parameters a signed URL carries: its claims and their signature. */
export interface SignedQuery {
  token: string;
  signature: string;
}

function invalidSignedUrl(): UnauthorizedError {
  return new UnauthorizedError('invalid_signed_url', 'this link is not valid, has expired, or is not for this request');
}

/**
 * Short-lived URLs for clients that send no credentials to them (issue 26: the stock CLI uploads
 * and downloads state through `hosted-state-*-url`s; the registry's downloads later). A URL is
 * bound to one object (its path), one verb and an expiry, and may carry claims (what an upload
 * will be recorded as); all are signed with HMAC-SHA256 under a key of the server's. Nothing else
 * in Trellis accepts a credential in a query string.
 */
export class SignedUrls {
  constructor(
    private readonly key: Uint8Array,
    private readonly clock: Clock,
  ) {
    if (key.length < 32) throw new Error('the signing key of signed URLs must be at least 32 bytes');
  }

  /** The query of a URL for `verb` on `object`, valid `ttlSeconds`, carrying `claims`. */
  sign(verb: string, object: string, ttlSeconds: number, claims: JsonObject = {}): SignedQuery {
    const exp = Math.floor(this.clock.now().getTime() / 1000) + ttlSeconds;
    const token = Buffer.from(JSON.stringify({ ...claims, v: verb.toUpperCase(), o: object, exp }), 'utf8').toString(
      'base64url',
    );
    return { token, signature: this.mac(token) };
  }

  /** `object?token=…&signature=…` (the object is a path; the caller adds the origin). */
  path(verb: string, object: string, ttlSeconds: number, claims: JsonObject = {}): string {
    const { token, signature } = this.sign(verb, object, ttlSeconds, claims);
    return `${object}?${new URLSearchParams({ token, signature })}`;
  }

  /**
   * The claims of a signed URL used for `verb` on `object`: `401 invalid_signed_url` when the
   * signature is wrong, the URL is for another object or verb, or it has expired.
   */
  verify(verb: string, object: string, query: { token?: unknown; signature?: unknown }): JsonObject {
    const { token, signature } = query;
    if (typeof token !== 'string' || typeof signature !== 'string' || token.length > 8192) throw invalidSignedUrl();
    const expected = Buffer.from(this.mac(token), 'utf8');
    const given = Buffer.from(signature, 'utf8');
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalidSignedUrl();
    let claims: JsonObject;
    try {
      claims = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as JsonObject;
    } catch {
      throw invalidSignedUrl();
    }
    const now = this.clock.now().getTime() / 1000;
    if (claims.v !== verb.toUpperCase() || claims.o !== object || typeof claims.exp !== 'number' || claims.exp < now) {
      throw invalidSignedUrl();
    }
    return claims;
  }

  private mac(token: string): string {
    return createHmac('sha256', this.key).update(token, 'utf8').digest('base64url');
  }
}
