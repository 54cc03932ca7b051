import type { UseCases } from '@trellis/core';
import { implement, type RouteSpec } from '../routing/route.js';
import { operations } from '@trellis/contract';

/** The job queue (issue 29). */
export function queueRoutes(useCases: UseCases): RouteSpec[] {
  return [
    implement(operations.getJobQueue, async ({ user, query }) => ({
      status: 200,
      body: await useCases.queue.list(user, query),
    })),
  ];
}
