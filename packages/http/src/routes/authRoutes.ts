import type { UseCases } from '@trellis/core';
import { requestContext } from '../routing/requestContext.js';
import { implement, type RouteSpec } from '../routing/route.js';
import { operations } from '@trellis/contract';

/** Device login and CLI tokens (SPEC §4.1, §5.3). */
export function authRoutes(useCases: UseCases): RouteSpec[] {
  return [
    implement(operations.generateCliLogin, async ({ user, body }) => ({
      status: 201,
      body: await useCases.auth.generateCliLogin(user, body.device_code),
    })),
    implement(operations.exchangeCliLogin, async ({ body }) => ({
      status: 200,
      body: await useCases.auth.exchangeCliLogin(body),
    })),
    implement(operations.refreshCliTokens, async ({ body }) => ({
      status: 200,
      body: await useCases.auth.refresh(body.refresh_token),
    })),
    implement(operations.logoutCli, async ({ req, res, body }) => {
      await useCases.auth.revoke(body.refresh_token, requestContext(req, res));
      return { status: 204 };
    }),
    implement(operations.whoAmI, async ({ user }) => {
      const found = await useCases.auth.getUser(user.userId);
      return {
        status: 200,
        body: { id: user.userId, email: found?.email ?? user.email, name: found?.name ?? user.email },
      };
    }),
  ];
}
