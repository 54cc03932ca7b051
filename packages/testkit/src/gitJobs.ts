import {
  type Clock,
  type CoreSettings,
  configHash,
  enqueueVcsFeedback,
  type Job,
  type JobType,
  ownerScope,
  type Random,
  snapshotOfVine,
  type UnitOfWork,
  type VcsJobTrigger,
} from '@trellis/core';

/**
 * Queues a job a push or a pull request triggered, the way the webhook path does: the job (of the
 * vine's current snapshot) and its `pending` commit status in one unit of work.
 */
export async function queueGitJob(
  uow: UnitOfWork,
  deps: { clock: Clock; random: Random; settings: Pick<CoreSettings, 'notifications'> },
  input: { ownerId: string; vineId: string; trigger: VcsJobTrigger; jobType?: Exclude<JobType, 'DESTROY_WORKER'> },
): Promise<Job> {
  return uow.run(ownerScope(input.ownerId), async (stores) => {
    const vine = await stores.vines.get(input.ownerId, input.vineId);
    if (!vine) throw new Error(`no vine ${input.vineId} of ${input.ownerId}`);
    const snapshot = snapshotOfVine(vine);
    const job = await stores.jobs.create({
      id: deps.random.uuid(),
      owner_id: input.ownerId,
      job_type: input.jobType ?? 'PLAN',
      status: 'QUEUED',
      config_snapshot: snapshot,
      config_hash: configHash(snapshot),
      vine_id: vine.id,
      vineyard_id: vine.vineyard_id,
      cloud_identity_id: vine.cloud_identity_id,
      assigned_worker_id: null,
      claimed_by_worker_id: null,
      plan_job_id: null,
      target_worker_id: null,
      execution_metadata: {},
      error_message: null,
      vine_status_before: null,
      trigger: input.trigger,
      created_by: null,
      caused_by: null,
      claimed_policies: null,
      approval: null,
      policy_override: null,
      created_at: deps.clock.now().toISOString(),
      claimed_at: null,
      finished_at: null,
    });
    await enqueueVcsFeedback(stores, deps, job, 'queued');
    return job;
  });
}

/** A pull request trigger of `acme/infra` #7 at GitHub, head `headSha`. */
export function pullRequestTrigger(headSha: string, overrides: Partial<VcsJobTrigger> = {}): VcsJobTrigger {
  return {
    type: 'pull_request',
    provider: 'github',
    repository: 'acme/infra',
    number: 7,
    title: 'More subnets',
    url: 'https://github.com/acme/infra/pull/7',
    head_sha: headSha,
    head_branch: 'subnets',
    base_branch: 'main',
    author: 'ada',
    ...overrides,
  } as VcsJobTrigger;
}
