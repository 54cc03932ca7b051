import type { Job } from '../domain/records.js';
import { deriveWorkerStatus } from '../domain/workerStatus.js';
import type { JobOffer } from '../ports/JobStore.js';
import type { Stores } from '../ports/UnitOfWork.js';

/**
 * How long a DEPLOY (or DESTROY) of a plan is held for the agent that ran the plan (issue 31):
 * that agent still has the plan's workspace (the configuration, the plan file, `.terraform` and its
 * lock file) and skips the downloads and `tofu init`. An idle agent claims again within
 * milliseconds of its report, and a busy or gone one is never offered the job, so a few seconds
 * cover the hand-off with room for a loaded machine; past them any agent takes the job, and a
 * long-polled claim re-checks every 2 s, so an agent that dies inside the window delays the job by
 * at most this plus one re-check, never stalls it.
 */
export const DEPLOY_OFFER_MS = 3_000;

/** What `deployOfferOf` needs of the job being queued. */
export interface OfferedJobSpec {
  owner_id: string;
  job_type: Job['job_type'];
  plan_job_id: string | null;
  assigned_worker_id: string | null;
  target_worker_id: string | null;
  /** The plan, when the caller holds it already: not read again. */
  plan?: Job;
}

/**
 * The offer a new job of a plan gets: to the agent that ran the plan, for `DEPLOY_OFFER_MS` from
 * `now`, when that agent is online and idle (an agent busy with other work would only make the
 * job wait). None for a job that applies no plan, one assigned to or targeting an agent (those
 * rules stand alone), a plan no agent ran, or an agent gone, silent, destroyed or busy.
 */
export async function deployOfferOf(
  stores: Stores,
  spec: OfferedJobSpec,
  now: Date,
  heartbeatTimeoutSeconds: number,
): Promise<JobOffer | null> {
  if (spec.plan_job_id === null || (spec.job_type !== 'DEPLOY' && spec.job_type !== 'DESTROY')) return null;
  if (spec.assigned_worker_id !== null || spec.target_worker_id !== null) return null;
  const plan = spec.plan?.id === spec.plan_job_id ? spec.plan : await stores.jobs.get(spec.owner_id, spec.plan_job_id);
  const workerId = plan?.claimed_by_worker_id ?? null;
  if (workerId === null) return null;
  const [worker, busy] = await Promise.all([
    stores.workers.get(spec.owner_id, workerId),
    stores.jobs.busyWorkerIds(spec.owner_id),
  ]);
  if (!worker) return null;
  const status = deriveWorkerStatus(worker, busy.includes(workerId), now, heartbeatTimeoutSeconds);
  if (status !== 'ONLINE') return null;
  return { worker_id: workerId, until: new Date(now.getTime() + DEPLOY_OFFER_MS).toISOString() };
}
