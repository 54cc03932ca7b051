import type { CoreModule } from '../modules/CoreModule.js';
import { useCase } from '../modules/CoreModule.js';
import { coreServices, serviceRef } from '../tokens.js';
import { PlanReviewUseCases, planReviewHooks } from './PlanReviewUseCases.js';
import { PolicyUseCases } from './PolicyUseCases.js';

/** Policies (issue 15) and the approvals of plans (the deploy gate's people). */
export const policyServices = {
  policies: serviceRef<PolicyUseCases>('trellis.policies.policies'),
  planReviews: serviceRef<PlanReviewUseCases>('trellis.policies.plan-reviews'),
} as const;

export const policiesModule: CoreModule = {
  name: 'policies',
  useCases: [
    useCase('policies', policyServices.policies, (get) => new PolicyUseCases(get(coreServices.deps))),
    useCase(
      'planReviews',
      policyServices.planReviews,
      (get) => new PlanReviewUseCases(get(coreServices.deps), get(coreServices.jobLifecycle)),
    ),
  ],
  hooks: () => ({ report: planReviewHooks }),
};
