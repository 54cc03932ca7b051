import { policyResultsOf } from '../domain/policies.js';
import type { JobHook } from '../jobs/hooks.js';
import { planPolicyResultOf, setsPlanPolicy } from './fleet.js';

/**
 * The fleet (issue 29) on the lifecycle: a deployable plan that succeeded leaves its policy
 * result on its vine, so the fleet filters and counts it without reading any job.
 */
export const fleetHooks: readonly JobHook[] = [
  {
    name: 'fleet.planPolicy',
    on: ['reported'],
    async run(job, _change, { stores }) {
      if (!setsPlanPolicy(job) || job.vine_id === null) return;
      await stores.vines.recordPlanPolicy(
        job.owner_id,
        job.vine_id,
        planPolicyResultOf(policyResultsOf(job.execution_metadata)),
      );
    },
  },
];
