import type { UseCases } from '@trellis/core';
import { Job, NameParams } from '@trellis/contract';
import { defineRoute, type RouteSpec } from '../routing/route.js';

/** Drift checks on demand (issue 16); a vine's drift and trigger settings are its settings. */
export function driftRoutes(useCases: UseCases): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/cli/configurations/{name}/drift-check',
      operationId: 'checkConfigurationDrift',
      summary: 'Queue a drift check of a vine now (by id or name)',
      description:
        'A speculative PLAN job with `trigger: {type:"drift"}`, on a DEPLOYED vine with no queued or running job (409 `configuration_not_deployed` or `configuration_busy`). Its result lands on the vine as `drift`; it can never be deployed (409 `plan_speculative`).',
      tags: ['configurations'],
      auth: 'user',
      params: NameParams,
      responses: { 202: { description: 'The queued drift check', schema: Job } },
      handler: async ({ user, params }) => ({ status: 202, body: await useCases.drift.checkNow(user, params.name) }),
    }),
  ];
}
