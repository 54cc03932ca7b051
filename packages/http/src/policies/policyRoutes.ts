import type { UseCases } from '@trellis/core';
import { pagedList } from '../routing/pagedList.js';
import { implement, type RouteSpec } from '../routing/route.js';
import { operations } from '@trellis/contract';

/** Policies (issue 15, docs/policies.md). */
export function policyRoutes(useCases: UseCases): RouteSpec[] {
  return [
    implement(operations.createPolicy, async ({ user, body }) => ({
      status: 201,
      body: await useCases.policies.create(user, body),
    })),
    implement(operations.listPolicies, async ({ req, user, query }) =>
      pagedList(req, 'policies', await useCases.policies.list(user, query)),
    ),
    implement(operations.getPolicy, async ({ user, params }) => ({
      status: 200,
      body: await useCases.policies.get(user, params.id),
    })),
    implement(operations.updatePolicy, async ({ user, params, body }) => ({
      status: 200,
      body: await useCases.policies.update(user, params.id, body),
    })),
    implement(operations.deletePolicy, async ({ user, params }) => {
      await useCases.policies.delete(user, params.id);
      return { status: 204 };
    }),
  ];
}
