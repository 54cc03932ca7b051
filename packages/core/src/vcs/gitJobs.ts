import { planChanges } from '../domain/jobResults.js';
import { planGateProblem } from '../jobs/deployGate.js';
import type { Job } from '../domain/records.js';
import type { JobHook } from '../jobs/hooks.js';
import type { JobLifecycle } from '../jobs/JobLifecycle.js';
import type { Stores } from '../ports/UnitOfWork.js';
import { configHash, pinnedCommitOf, snapshotOfVineAt } from '../snapshot/configSnapshot.js';
import { pushMayAutoDeploy } from './pushAncestry.js';

/** The changes a finished PLAN reported (`plan_summary` of its metadata); null when it reported none. */
export function planChangeCount(job: Pick<Job, 'execution_metadata'>): number | null {
  const summary = job.execution_metadata.plan_summary;
  return summary === undefined ? null : planChanges(summary);
}

/**
 * `auto_deploy` (issue 13): a push's PLAN that succeeded with changes queues a DEPLOY of that
 * plan, when the vine is still connected with `auto_deploy`, the plan's configuration is still
 * the vine's (the stale-plan guard: a configuration changed since is not deployed), the plan has
 * its artifact and no DEPLOY applies it yet. A plan that failed a mandatory policy waits for an
 * admin's override; a plan of a vine that requires approval waits for the approval, which calls
 * this again (`approved`). Returns the DEPLOY, or null.
 */
export async function autoDeployAfterPlan(
  stores: Stores,
  lifecycle: JobLifecycle,
  plan: Job,
  options: { approved?: boolean } = {},
): Promise<Job | null> {
  if (plan.job_type !== 'PLAN' || plan.status !== 'SUCCESS' || plan.trigger.type !== 'push' || plan.vine_id === null) {
    return null;
  }
  const changes = planChangeCount(plan);
  if (changes === null || changes === 0) return null;
  const connection = await stores.vcs.get(plan.owner_id, plan.vine_id);
  if (!connection?.auto_deploy) return null;
  // Never back to an older commit: a replayed push, or a plan overtaken by a newer deploy (issue 23).
  if (!(await pushMayAutoDeploy(stores, plan))) return null;
  const vine = await stores.vines.get(plan.owner_id, plan.vine_id);
  const commit = pinnedCommitOf(plan.config_snapshot);
  if (!vine || commit === null) return null;
  // A vine that requires approval (issue 15) deploys a plan once a person approves it: the
  // approval calls this again with `approved`.
  if (vine.approval?.required && !(options.approved && plan.approval?.decision === 'approved')) return null;
  // The deploy gate (issue 23): unchecked or failed mandatory policies (without an override), a
  // missing approval, a rejection. A destroy plan is never auto-deployed.
  if (plan.config_snapshot.destroy === true || planGateProblem(plan, vine.approval) !== null) return null;
  if (configHash(snapshotOfVineAt(vine, commit)) !== plan.config_hash) return null;
  if (!(await stores.planArtifacts.get(plan.owner_id, plan.id))) return null;
  if ((await stores.jobs.listDeploysOfPlan(plan.owner_id, plan.id)).length > 0) return null;
  return lifecycle.queue(stores, {
    owner_id: vine.owner_id,
    job_type: 'DEPLOY',
    vine,
    commit,
    plan_job_id: plan.id,
    trigger: plan.trigger,
    actor: 'system',
    caused_by: plan.caused_by,
    audit: { trigger: 'push', commit_sha: commit, plan_job_id: plan.id, auto_deploy: true },
  });
}

/** A push's plan with changes, on a vine connected with `auto_deploy`, is deployed (issue 13). */
export const autoDeployHooks: readonly JobHook[] = [
  {
    name: 'vcs.autoDeploy',
    on: ['reported'],
    async run(job, _change, { stores, lifecycle }) {
      await autoDeployAfterPlan(stores, lifecycle, job);
    },
  },
];
