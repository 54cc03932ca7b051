import { isDomainError, type PendingSignIn, type UseCases } from '@trellis/core';
import type { Request } from 'express';
import type { SessionCookies } from '../auth/SessionCookies.js';
import type { SignInCookies } from '../auth/SignInCookies.js';
import type { Logger } from '../logger.js';
import { requestContext } from '../routing/requestContext.js';
import { defineRoute, type RouteSpec } from '../routing/route.js';
import { CallbackQuery, ProvidersResponse, SignInParams, SignInQuery } from '@trellis/contract';

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
    defineRoute({
      method: 'get',
      path: '/api/auth/providers',
      operationId: 'listSignInProviders',
      summary: 'The sign-in providers this server is configured for',
      tags: ['auth'],
      auth: 'none',
      responses: { 200: { description: 'Providers, in button order', schema: ProvidersResponse } },
      handler: async ({ req }) => ({
        status: 200,
        body: {
          providers: useCases.signIn.providers().map((provider) => ({
            ...provider,
            signin_url: `${req.baseUrl}/auth/signin/${provider.id}`,
          })),
        },
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/auth/signin/{provider}',
      operationId: 'startSignIn',
      summary: "Send the browser to the provider's sign-in",
      description:
        "Answers 303 to the provider's authorization URL and sets a short-lived, HTTP-only, SameSite=Lax cookie binding a one-time state (with the PKCE verifier, the OpenID Connect nonce, the provider and `next`) to this browser. `next` must be a path on this site (`400 invalid_next` otherwise); a provider that is not configured is `404 provider_not_configured`.",
      tags: ['auth'],
      auth: 'none',
      rateLimit: { windowSeconds: 60, limit: 60 },
      params: SignInParams,
      query: SignInQuery,
      responses: { 303: { description: "Redirect to the provider's authorization URL" } },
      handler: async ({ res, params, query }) => {
        const { authorizationUrl, pending } = await useCases.signIn.start(
          params.provider,
          query.next,
          deps.callbackUrl(),
        );
        signIns.write(res, pending);
        return { status: 303, headers: { Location: authorizationUrl, 'Cache-Control': 'no-store' } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/auth/callback',
      operationId: 'completeSignIn',
      summary: 'Where the provider sends the browser back',
      description:
        'Checks the state against the sign-in cookie of this browser (one-time, bound to the provider it was issued for), exchanges the code (with PKCE where the provider supports it), requires a verified email, creates or links the user and the identity, stores the provider token encrypted, starts the web session and answers 303 to `next`. Failures answer 303 to `/signin?error=<code>&provider=<id>&next=<path>`, with `code` one of `invalid_state`, `provider_mismatch`, `access_denied`, `provider_error`, `invalid_id_token`, `email_not_verified`, `provider_not_configured`, `provider_unavailable`, `server_error`.',
      tags: ['auth'],
      auth: 'none',
      rateLimit: { windowSeconds: 60, limit: 60 },
      query: CallbackQuery,
      responses: { 303: { description: 'Redirect to `next` (signed in) or to `/signin?error=<code>`' } },
      handler: async ({ req, res, query }) => {
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
      },
    }),
  ];
}
