import { type Clock, IDENTITY_PROVIDERS, isOneOf, type PendingSignIn } from '@trellis/core';
import { parse as parseCookies, serialize } from 'cookie';
import type { Request, Response } from 'express';
import jwt from 'jsonwebtoken';

const AUDIENCE = 'trellis-signin';
const ISSUER = 'trellis';

/**
 * The sign-in on its way through the provider, kept by the browser that started it: a signed,
 * short-lived, HTTP-only, SameSite=Lax cookie (Lax, so the provider's top-level redirect back to
 * the callback carries it). It binds the state, the PKCE verifier, the nonce, the provider and
 * `next` to this browser; the callback clears it, so it works once.
 */
export class SignInCookies {
  constructor(private readonly options: { secret: string; secure: boolean; clock: Clock }) {}

  get cookieName(): string {
    return this.options.secure ? '__Host-trellis_signin' : 'trellis_signin';
  }

  write(res: Response, pending: PendingSignIn): void {
    const now = this.nowSeconds();
    const exp = Math.floor(Date.parse(pending.expiresAt) / 1000);
    const token = jwt.sign(
      {
        type: 'signin',
        provider: pending.provider,
        state: pending.state,
        cv: pending.codeVerifier,
        nonce: pending.nonce,
        next: pending.next,
        exp,
      },
      this.options.secret,
      { algorithm: 'HS256', audience: AUDIENCE, issuer: ISSUER, noTimestamp: true },
    );
    res.append(
      'Set-Cookie',
      serialize(this.cookieName, token, { ...this.attributes(), maxAge: Math.max(0, exp - now) }),
    );
  }

  /** The pending sign-in of this browser, or null when there is none or it is forged or over. */
  read(req: Request): PendingSignIn | null {
    const value = parseCookies(req.headers.cookie ?? '')[this.cookieName];
    if (!value) return null;
    try {
      const payload = jwt.verify(value, this.options.secret, {
        algorithms: ['HS256'],
        audience: AUDIENCE,
        issuer: ISSUER,
        clockTimestamp: this.nowSeconds(),
      });
      if (
        typeof payload !== 'object' ||
        payload.type !== 'signin' ||
        !isOneOf(IDENTITY_PROVIDERS, payload.provider) ||
        typeof payload.state !== 'string' ||
        typeof payload.cv !== 'string' ||
        typeof payload.nonce !== 'string' ||
        typeof payload.next !== 'string' ||
        typeof payload.exp !== 'number'
      ) {
        return null;
      }
      return {
        provider: payload.provider,
        state: payload.state,
        codeVerifier: payload.cv,
        nonce: payload.nonce,
        next: payload.next,
        expiresAt: new Date(payload.exp * 1000).toISOString(),
      };
    } catch {
      return null;
    }
  }

  clear(res: Response): void {
    res.append('Set-Cookie', serialize(this.cookieName, '', { ...this.attributes(), maxAge: 0 }));
  }

  private attributes() {
    return { httpOnly: true, secure: this.options.secure, sameSite: 'lax' as const, path: '/' };
  }

  private nowSeconds(): number {
    return Math.floor(this.options.clock.now().getTime() / 1000);
  }
}
