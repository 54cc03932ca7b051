import type { UseCases } from '@trellis/core';
import { requestContext } from '../routing/requestContext.js';
import { defineRoute, type RouteSpec } from '../routing/route.js';
import {
  ExchangeBody,
  ExchangeResponse,
  GenerateBody,
  GenerateResponse,
  RefreshBody,
  TokenPairResponse,
  WhoAmIResponse,
} from '@trellis/contract';

/** Device login and CLI tokens (SPEC §4.1, §5.3). */
export function authRoutes(useCases: UseCases): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/auth/cli/generate',
      operationId: 'generateCliLogin',
      summary: 'Approve a CLI login from the browser',
      description:
        'Records the device code the CLI made with a fresh 6-character verification code, which the browser shows so the person can type it into the CLI. Web session only; a device code can be approved once.',
      tags: ['auth'],
      auth: 'session',
      body: GenerateBody,
      responses: { 201: { description: 'The code to show', schema: GenerateResponse } },
      handler: async ({ user, body }) => ({
        status: 201,
        body: await useCases.auth.generateCliLogin(user, body.device_code),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/auth/cli/exchange',
      operationId: 'exchangeCliLogin',
      summary: 'Trade an approved device code and its verification code for tokens',
      description:
        'Errors use OAuth words as `code`: `authorization_pending` (not approved yet), `expired_token`, `invalid_grant` (wrong code, used, or dead after 5 wrong attempts).',
      tags: ['auth'],
      auth: 'none',
      rateLimit: { windowSeconds: 60, limit: 20 },
      body: ExchangeBody,
      responses: { 200: { description: 'Tokens', schema: ExchangeResponse } },
      handler: async ({ body }) => ({ status: 200, body: await useCases.auth.exchangeCliLogin(body) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/auth/cli/refresh',
      operationId: 'refreshCliTokens',
      summary: 'Rotate the CLI tokens',
      description:
        'Both tokens are replaced and the old refresh token stops working. Presenting an already rotated refresh token revokes every token of its login.',
      tags: ['auth'],
      auth: 'none',
      rateLimit: { windowSeconds: 60, limit: 60 },
      body: RefreshBody,
      responses: { 200: { description: 'New tokens', schema: TokenPairResponse } },
      handler: async ({ body }) => ({ status: 200, body: await useCases.auth.refresh(body.refresh_token) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/auth/cli/logout',
      operationId: 'logoutCli',
      summary: 'Revoke a CLI login (its refresh token and every rotation of it)',
      tags: ['auth'],
      auth: 'none',
      rateLimit: { windowSeconds: 60, limit: 60 },
      body: RefreshBody,
      responses: { 204: { description: 'Revoked' } },
      handler: async ({ req, res, body }) => {
        await useCases.auth.revoke(body.refresh_token, requestContext(req, res));
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/cli/whoami',
      operationId: 'whoAmI',
      summary: 'The signed-in user',
      tags: ['auth'],
      auth: 'user',
      responses: { 200: { description: 'The user', schema: WhoAmIResponse } },
      handler: async ({ user }) => {
        const found = await useCases.auth.getUser(user.userId);
        return {
          status: 200,
          body: { id: user.userId, email: found?.email ?? user.email, name: found?.name ?? user.email },
        };
      },
    }),
  ];
}
