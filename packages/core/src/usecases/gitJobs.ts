import { failedMandatoryPolicies } from '../domain/policies.js';
import type { Job, JobTrigger, Vine } from '../domain/records.js';
import type { Stores } from '../ports/UnitOfWork.js';
import { configHash, pinnedCommitOf, snapshotOfVineAt } from '../snapshot/configSnapshot.js';
import { pushMayAutoDeploy } from '../vcs/pushAncestry.js';
import { recordAudit } from './audit.js';
import type { CoreDeps } from './CoreDeps.js';
import { enqueueVcsFeedback } from './vcsFeedback.js';

/** The changes a finished PLAN reported (`plan_summary` of its metadata); null when it reported none readable. */
export function planChangeCount(job: Pick<Job, 'execution_metadata'>): number | null {
  const summary = job.execution_metadata.plan_summary;
  if (typeof summary !== 'object' || summary === null || Array.isArray(summary)) return null;
  const counts = [summary.add, summary.change, summary.destroy];
  if (!counts.every((n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0)) return null;
  return (counts as number[]).reduce((sum, n) => sum + n, 0);
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
  deps: Pick<CoreDeps, 'random' | 'clock' | 'settings'>,
  plan: Job,
  at: string,
  options: { approved?: boolean } = {},
): Promise<Job | null> {
  if (plan.job_type !== 'PLAN' || plan.status !== 'SUCCESS' || plan.trigger.type !== 'push' || plan.vine_id === null) {
    return null;
  }
  const changes = planChangeCount(plan);
  if (changes === null || changes === 0) return null;
  // A plan that failed a mandatory policy deploys only with an admin's override.
  if (failedMandatoryPolicies(plan.execution_metadata).length > 0 && plan.policy_override === null) return null;
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
  if (configHash(snapshotOfVineAt(vine, commit)) !== plan.config_hash) return null;
  if (!(await stores.planArtifacts.get(plan.owner_id, plan.id))) return null;
  if ((await stores.jobs.listDeploysOfPlan(plan.owner_id, plan.id)).length > 0) return null;
  const deploy = await createGitJob(stores, deps, vine, 'DEPLOY', plan.trigger, commit, plan.id, at);
  await recordAudit(stores, deps, 'system', {
    action: 'job.create',
    target: { type: 'job', id: deploy.id },
    owner_id: deploy.owner_id,
    details: {
      job_type: deploy.job_type,
      vine_id: vine.id,
      trigger: 'push',
      commit_sha: commit,
      plan_job_id: plan.id,
      auto_deploy: true,
    },
  });
  return deploy;
}

/**
 * A job of the vine at one commit, queued by system work, that any of the owner's agents may run;
 * its commit gets a `pending` status at the provider (the feedback outbox, same unit of work).
 */
export async function createGitJob(
  stores: Stores,
  deps: Pick<CoreDeps, 'random' | 'clock' | 'settings'>,
  vine: Vine,
  jobType: 'PLAN' | 'DEPLOY',
  trigger: JobTrigger,
  commit: string,
  planJobId: string | null,
  at: string,
): Promise<Job> {
  const snapshot = snapshotOfVineAt(vine, commit);
  const job = await stores.jobs.create({
    id: deps.random.uuid(),
    owner_id: vine.owner_id,
    job_type: jobType,
    status: 'QUEUED',
    config_snapshot: snapshot,
    config_hash: configHash(snapshot),
    vine_id: vine.id,
    vineyard_id: vine.vineyard_id,
    cloud_identity_id: vine.cloud_identity_id,
    assigned_worker_id: null,
    claimed_by_worker_id: null,
    plan_job_id: planJobId,
    target_worker_id: null,
    execution_metadata: {},
    error_message: null,
    vine_status_before: null,
    trigger,
    created_by: null,
    approval: null,
    policy_override: null,
    created_at: at,
    claimed_at: null,
    finished_at: null,
  });
  await enqueueVcsFeedback(stores, deps, job, 'queued');
  return job;
}
