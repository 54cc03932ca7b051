import type { UseCases } from '@trellis/core';
import { implement, type RouteSpec } from '../routing/route.js';
import { operations } from '@trellis/contract';

/** The deploy gate's people (issue 15): a plan approved, rejected, or its failed policies overridden. */
export function planReviewRoutes(useCases: UseCases): RouteSpec[] {
  return [
    implement(operations.approvePlan, async ({ user, params, body }) => ({
      status: 200,
      body: await useCases.planReviews.approve(user, params.id, body),
    })),
    implement(operations.rejectPlan, async ({ user, params, body }) => ({
      status: 200,
      body: await useCases.planReviews.reject(user, params.id, body),
    })),
    implement(operations.overridePlanPolicies, async ({ user, params, body }) => ({
      status: 200,
      body: await useCases.planReviews.override(user, params.id, body),
    })),
  ];
}
