import type { UseCases } from '@trellis/core';
import { pagedList } from '../routing/pagedList.js';
import { implement, type RouteSpec } from '../routing/route.js';
import { operations } from '@trellis/contract';

/** CI-only endpoints (SPEC §4.4), behind `Authorization: Bearer <RELEASE_API_SECRET>`. */
export function releaseRoutes(useCases: UseCases): RouteSpec[] {
  return [
    implement(operations.publishWorkerRelease, async ({ body }) => ({
      status: 201,
      body: await useCases.releases.publish(body),
    })),
    implement(operations.listWorkerReleases, async ({ req, query }) =>
      pagedList(req, 'releases', await useCases.releases.list(query)),
    ),
    implement(operations.registerTendril, async ({ body }) => ({
      status: 201,
      body: await useCases.workers.registerTendril(body),
    })),
  ];
}
