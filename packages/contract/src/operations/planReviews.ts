/** A plan's review: approve, reject, override: each operation as data (served by `http/src/policies/planReviewRoutes.ts`). */
import { operation } from '../operation.js';
import { ApprovePlanBody, IdParams, Job, OverridePlanBody, RejectPlanBody } from '../schemas.js';

export const approvePlan = operation({
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
});

export const rejectPlan = operation({
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
});

export const overridePlanPolicies = operation({
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
});

/** In the order the API reference lists them. */
export const planReviewsOperations = { approvePlan, rejectPlan, overridePlanPolicies };
