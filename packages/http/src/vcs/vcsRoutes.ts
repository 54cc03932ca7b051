import type { UseCases } from '@trellis/core';
import { implement, type RouteSpec } from '../routing/route.js';
import { operations } from '@trellis/contract';

/** A vine's repository connection (issue 13): pushes plan it, pull requests plan it speculatively. */
export function vcsRoutes(useCases: UseCases): RouteSpec[] {
  return [
    implement(operations.connectConfigurationRepository, async ({ user, params, body }) => ({
      status: 200,
      body: await useCases.vcs.connect(user, params.name, body),
    })),
    implement(operations.getConfigurationRepository, async ({ user, params }) => ({
      status: 200,
      body: await useCases.vcs.get(user, params.name),
    })),
    implement(operations.disconnectConfigurationRepository, async ({ user, params }) => {
      await useCases.vcs.disconnect(user, params.name);
      return { status: 204 };
    }),
  ];
}
