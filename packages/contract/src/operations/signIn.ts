/** Web sign-in: each operation as data (served by `http/src/routes/signInRoutes.ts`). */
import { operation } from '../operation.js';
import { CallbackQuery, ProvidersResponse, SignInParams, SignInQuery } from '../schemas.js';

export const listSignInProviders = operation({
  method: 'get',
  path: '/api/auth/providers',
  operationId: 'listSignInProviders',
  summary: 'The sign-in providers this server is configured for',
  tags: ['auth'],
  auth: 'none',
  responses: { 200: { description: 'Providers, in button order', schema: ProvidersResponse } },
});

export const startSignIn = operation({
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
});

export const completeSignIn = operation({
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
});

/** In the order the API reference lists them. */
export const signInOperations = { listSignInProviders, startSignIn, completeSignIn };
