import type { UseCases } from '@trellis/core';
import { ApprovePlanBody, IdParams, Job, OverridePlanBody, RejectPlanBody } from '@trellis/contract';
import { defineRoute, type RouteSpec } from '../routing/route.js';

/** The deploy gate's people (issue 15): a plan approved, rejected, or its failed policies overridden. */
export function planReviewRoutes(useCases: UseCases): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/cli/jobs/{id}/approve',
      operationId: 'approvePlan',
      summary: 'Approve a plan, so it may be deployed',
      description:
        'A successful PLAN (not a drift check) not yet applied, decided once (409 `plan_already_decided`). A stale plan cannot be approved (409 `plan_stale`); with the `separate_approver` setting the person who queued it cannot (403 `separate_approver_required`). In an organization: operators and above. Recorded on the plan as `approval` and audited (`plan.approve`).',
      tags: ['jobs'],
      auth: 'user',
      params: IdParams,
      body: ApprovePlanBody,
      responses: { 200: { description: 'The plan job, with its approval', schema: Job } },
      handler: async ({ user, params, body }) => ({
        status: 200,
        body: await useCases.planReviews.approve(user, params.id, body),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/cli/jobs/{id}/reject',
      operationId: 'rejectPlan',
      summary: "Reject a plan, which ends that plan's path to deploy",
      description:
        'A comment says why. Decided once (409 `plan_already_decided`); a DEPLOY of a rejected plan is refused (409 `plan_rejected`). In an organization: operators and above. Audited (`plan.reject`).',
      tags: ['jobs'],
      auth: 'user',
      params: IdParams,
      body: RejectPlanBody,
      responses: { 200: { description: 'The plan job, with its rejection', schema: Job } },
      handler: async ({ user, params, body }) => ({
        status: 200,
        body: await useCases.planReviews.reject(user, params.id, body),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/cli/jobs/{id}/override',
      operationId: 'overridePlanPolicies',
      summary: "Override a plan's failed mandatory policies, so it may be deployed",
      description:
        'Only a plan with failed mandatory policies (409 `no_failed_policies`), once (409 `plan_already_overridden`). In an organization: admins and owners; a personal plan: its owner. Recorded on the plan as `policy_override` and audited (`plan.override`).',
      tags: ['jobs'],
      auth: 'user',
      params: IdParams,
      body: OverridePlanBody,
      responses: { 200: { description: 'The plan job, with its override', schema: Job } },
      handler: async ({ user, params, body }) => ({
        status: 200,
        body: await useCases.planReviews.override(user, params.id, body),
      }),
    }),
  ];
}
