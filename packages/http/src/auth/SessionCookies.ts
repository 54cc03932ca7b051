import { type Clock, IDENTITY_PROVIDERS, type IdentityProvider, isOneOf, UnauthorizedError } from '@trellis/core';
import { parse as parseCookies, serialize } from 'cookie';
import type { Request, Response } from 'express';
import jwt from 'jsonwebtoken';

export interface SessionOptions {
  secret: string;
  /** Served over https: the cookie gets `Secure` and the `__Host-` prefix. */
  secure: boolean;
  /** A session unused this long ends (sliding, refreshed on every request). */
  idleSeconds: number;
  /** A session ends this long after sign-in, however active. */
  absoluteSeconds: number;
  clock: Clock;
}

export interface Session {
  userId: string;
  email: string;
  /** Seconds since the epoch when the user signed in. */
  authTime: number;
  /** The provider the user signed in with; null for the bootstrap admin. */
  provider: IdentityProvider | null;
}

const AUDIENCE = 'trellis-web';
const ISSUER = 'trellis';

/** The web session (SPEC §5.2): a signed JWT in an HTTP-only, SameSite=Lax cookie. */
export class SessionCookies {
  constructor(private readonly options: SessionOptions) {}

  get cookieName(): string {
    return this.options.secure ? '__Host-trellis_session' : 'trellis_session';
  }

  /** Starts a session after a successful sign-in (with `provider`, or the bootstrap link: null). */
  start(res: Response, user: { id: string; email: string }, provider: IdentityProvider | null = null): void {
    this.write(res, { userId: user.id, email: user.email, authTime: this.nowSeconds(), provider });
  }

  /** The session of the request, or null when there is none or it is invalid or over. */
  read(req: Request): Session | null {
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
        payload.type !== 'session' ||
        typeof payload.sub !== 'string' ||
        typeof payload.email !== 'string' ||
        typeof payload.auth_time !== 'number'
      ) {
        return null;
      }
      if (payload.auth_time + this.options.absoluteSeconds <= this.nowSeconds()) return null;
      return {
        userId: payload.sub,
        email: payload.email,
        authTime: payload.auth_time,
        provider: isOneOf(IDENTITY_PROVIDERS, payload.provider) ? payload.provider : null,
      };
    } catch {
      return null;
    }
  }

  /** Slides the idle expiry forward, never past the absolute limit. */
  refresh(res: Response, session: Session): void {
    this.write(res, session);
  }

  clear(res: Response): void {
    res.append('Set-Cookie', serialize(this.cookieName, '', { ...this.attributes(), maxAge: 0 }));
  }

  private write(res: Response, session: Session): void {
    const now = this.nowSeconds();
    const exp = Math.min(now + this.options.idleSeconds, session.authTime + this.options.absoluteSeconds);
    if (exp <= now) throw new UnauthorizedError('session_expired', 'the session has expired');
    const token = jwt.sign(
      {
        sub: session.userId,
        email: session.email,
        type: 'session',
        auth_time: session.authTime,
        ...(session.provider ? { provider: session.provider } : {}),
        exp,
      },
      this.options.secret,
      { algorithm: 'HS256', audience: AUDIENCE, issuer: ISSUER, noTimestamp: true },
    );
    res.append('Set-Cookie', serialize(this.cookieName, token, { ...this.attributes(), maxAge: exp - now }));
  }

  private attributes() {
    return { httpOnly: true, secure: this.options.secure, sameSite: 'lax' as const, path: '/' };
  }

  private nowSeconds(): number {
    return Math.floor(this.options.clock.now().getTime() / 1000);
  }
}
