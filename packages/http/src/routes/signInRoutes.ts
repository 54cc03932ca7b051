import { isDomainError, type PendingSignIn, type UseCases } from '@trellis/core';
import type { Request } from 'express';
import type { SessionCookies } from '../auth/SessionCookies.js';
import type { SignInCookies } from '../auth/SignInCookies.js';
import type { Logger } from '../logger.js';
import { requestContext } from '../routing/requestContext.js';
import { implement, type RouteSpec } from '../routing/route.js';
import { operations } from '@trellis/contract';

export interface SignInRouteDeps {
  useCases: UseCases;
  sessions: SessionCookies;
  signIns: SignInCookies;
  /** The callback URL registered with every provider: `<TRELLIS_WEB_URL>/api/auth/callback`. */
  callbackUrl: () => string;
  logger: Logger;
}

/** The sign-in page of the web interface, which shows callback errors as `?error=<code>`. */
function signInPage(req: Request, error: string, pending: PendingSignIn | null): string {
  const query = new URLSearchParams({ error });
  if (pending) {
    query.set('provider', pending.provider);
    if (pending.next !== '/') query.set('next', pending.next);
  }
  return `${req.baseUrl}/signin?${query}`;
}

/**
 * Web sign-in (SPEC §4.1, §5.2): the browser is sent to the provider with a one-time state bound
 * to it by a cookie, comes back to the callback, and leaves it signed in. The callback answers a
 * browser, so every failure is a redirect to `/signin?error=<code>` (with `provider` and `next`
 * when known) rather than a JSON problem.
 */
export function signInRoutes(deps: SignInRouteDeps): RouteSpec[] {
  const { useCases, sessions, signIns, logger } = deps;
  return [
    implement(operations.listSignInProviders, async ({ req }) => ({
      status: 200,
      body: {
        providers: useCases.signIn.providers().map((provider) => ({
          ...provider,
          signin_url: `${req.baseUrl}/auth/signin/${provider.id}`,
        })),
      },
    })),
    implement(operations.startSignIn, async ({ res, params, query }) => {
      const { authorizationUrl, pending } = await useCases.signIn.start(
        params.provider,
        query.next,
        deps.callbackUrl(),
      );
      signIns.write(res, pending);
      return { status: 303, headers: { Location: authorizationUrl, 'Cache-Control': 'no-store' } };
    }),
    implement(operations.completeSignIn, async ({ req, res, query }) => {
      const pending = signIns.read(req);
      signIns.clear(res);
      const parameters = Object.fromEntries(
        Object.entries(query).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
      );
      const noStore = { 'Cache-Control': 'no-store' };
      try {
        const { user, provider, next } = await useCases.signIn.complete(
          pending,
          parameters,
          deps.callbackUrl(),
          requestContext(req, res),
        );
        sessions.start(res, user, provider);
        return { status: 303, headers: { ...noStore, Location: `${req.baseUrl}${next}` } };
      } catch (error) {
        let code = 'server_error';
        if (isDomainError(error)) {
          code = error.code;
          logger.warn({ code, provider: pending?.provider, detail: error.message }, 'sign-in refused');
        } else {
          logger.error({ err: error, provider: pending?.provider }, 'sign-in failed');
        }
        return { status: 303, headers: { ...noStore, Location: signInPage(req, code, pending) } };
      }
    }),
  ];
}
