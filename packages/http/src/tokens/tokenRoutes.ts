import type { UseCases } from '@trellis/core';
import { pagedList } from '../routing/pagedList.js';
import { implement, type RouteSpec } from '../routing/route.js';
import { operations } from '@trellis/contract';

/** API tokens for automation (issue 12). Made and revoked by people, not by API tokens. */
export function tokenRoutes(useCases: UseCases): RouteSpec[] {
  return [
    implement(operations.createToken, async ({ user, body }) => ({
      status: 201,
      body: await useCases.apiTokens.create(user, body),
    })),
    implement(operations.listTokens, async ({ req, user, query }) =>
      pagedList(req, 'tokens', await useCases.apiTokens.list(user, query)),
    ),
    implement(operations.revokeToken, async ({ user, params }) => {
      await useCases.apiTokens.revoke(user, params.id);
      return { status: 204 };
    }),
  ];
}
