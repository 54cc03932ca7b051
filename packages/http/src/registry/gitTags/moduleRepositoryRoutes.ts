import type { UseCases } from '@trellis/core';
import { implement, type RouteSpec } from '../../routing/route.js';
import { operations } from '@trellis/contract';

/** Modules published from git tags (issue 28, docs/registry.md "From git tags"). */
export function moduleRepositoryRoutes(useCases: UseCases): RouteSpec[] {
  return [
    implement(operations.connectModuleRepository, async ({ user, params, body }) => ({
      status: 200,
      body: await useCases.moduleRepositories.connect(user, params, body),
    })),
    implement(operations.getModuleRepository, async ({ user, params }) => ({
      status: 200,
      body: await useCases.moduleRepositories.get(user, params),
    })),
    implement(operations.disconnectModuleRepository, async ({ user, params }) => {
      await useCases.moduleRepositories.disconnect(user, params);
      return { status: 204 };
    }),
    implement(operations.listModuleRepositories, async ({ user, params }) => ({
      status: 200,
      body: { repositories: await useCases.moduleRepositories.list(user, params.namespace) },
    })),
  ];
}
