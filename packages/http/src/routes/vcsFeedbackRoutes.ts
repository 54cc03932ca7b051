import type { UseCases } from '@trellis/core';
import { implement, type RouteSpec } from '../routing/route.js';
import { operations } from '@trellis/contract';

/** Whether a git-driven job's commit status and pull request comment reached the provider (issue 13). */
export function vcsFeedbackRoutes(useCases: UseCases): RouteSpec[] {
  return [
    implement(operations.getJobVcsFeedback, async ({ user, params }) => ({
      status: 200,
      body: { items: await useCases.vcsFeedback.forJob(user, params.id) },
    })),
  ];
}
