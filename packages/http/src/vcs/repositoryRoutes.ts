import type { UseCases } from '@trellis/core';
import { implement, type RouteSpec } from '../routing/route.js';
import { operations } from '@trellis/contract';

/** The user's repositories at a git provider (SPEC §4.3). */
export function repositoryRoutes(useCases: UseCases): RouteSpec[] {
  return [
    implement(operations.listRepositories, async ({ user, params }) => ({
      status: 200,
      body: { repositories: await useCases.repositories.list(user, params.provider) },
    })),
  ];
}
