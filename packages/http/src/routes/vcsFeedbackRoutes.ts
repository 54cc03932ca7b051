import type { UseCases } from '@trellis/core';
import { IdParams, VcsFeedbackList } from '@trellis/contract';
import { defineRoute, type RouteSpec } from '../routing/route.js';

/** Whether a git-driven job's commit status and pull request comment reached the provider (issue 13). */
export function vcsFeedbackRoutes(useCases: UseCases): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/cli/jobs/{id}/vcs-feedback',
      operationId: 'getJobVcsFeedback',
      summary: "Whether a job's commit status and pull request comment reached the git provider",
      description:
        'Oldest first; empty for a job no push or pull request queued. A provider that refuses or is down is retried with backoff (`pending` with `last_error`), never failing the job.',
      tags: ['jobs'],
      auth: 'user',
      params: IdParams,
      responses: { 200: { description: "The job's feedback items", schema: VcsFeedbackList } },
      handler: async ({ user, params }) => ({
        status: 200,
        body: { items: await useCases.vcsFeedback.forJob(user, params.id) },
      }),
    }),
  ];
}
