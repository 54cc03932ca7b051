import type { UseCases } from '@trellis/core';
import { implement, type RouteSpec } from '../routing/route.js';
import { operations } from '@trellis/contract';

/** Changing and deleting configurations and vineyards (issue 25). In an organization: admins and owners. */
export function vineEditRoutes(useCases: UseCases): RouteSpec[] {
  return [
    implement(operations.updateConfiguration, async ({ user, params, body }) => ({
      status: 200,
      body: await useCases.vineEdits.update(user, params.name, body),
    })),
    implement(operations.deleteConfiguration, async ({ user, params, query }) => ({
      status: 200,
      body: await useCases.vineEdits.delete(user, params.name, { force: query.force }),
    })),
    implement(operations.updateVineyard, async ({ user, params, body }) => ({
      status: 200,
      body: await useCases.vineEdits.updateVineyard(user, params.id, body),
    })),
    implement(operations.deleteVineyard, async ({ user, params }) => {
      await useCases.vineEdits.deleteVineyard(user, params.id);
      return { status: 204 };
    }),
  ];
}
