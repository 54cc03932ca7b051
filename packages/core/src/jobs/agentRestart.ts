import type { WorkerActor } from '../domain/actors.js';
import { ValidationError } from '../domain/errors.js';
import type { Job } from '../domain/records.js';
import { isUuid } from '../domain/validation.js';
import type { Stores } from '../ports/UnitOfWork.js';
import type { JobLifecycle } from './JobLifecycle.js';

/** At most this many job ids in a heartbeat's `running_job_ids` (an agent's concurrency is far lower). */
export const MAX_RUNNING_JOB_IDS = 256;

/**
 * `running_job_ids` of a heartbeat: absent (undefined) on the heartbeats of an agent that runs
 * on, the list of the jobs it runs on the first heartbeat of an agent that starts (empty after a
 * restart: a process that starts runs nothing yet).
 */
export function parseRunningJobIds(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.length > MAX_RUNNING_JOB_IDS || !value.every(isUuid)) {
    throw new ValidationError(`running_job_ids must be a list of at most ${MAX_RUNNING_JOB_IDS} job ids`, [
      { path: 'running_job_ids', message: `must be a list of at most ${MAX_RUNNING_JOB_IDS} job ids` },
    ]);
  }
  return value.map((id) => id.toLowerCase());
}

/**
 * An agent that starts says which jobs it runs (none after a restart). Every other job the
 * control plane thinks it runs died with its old process: each ends at once for
 * `agent_restarted` (FAILED, its vine with it, the state lock its dead engine held released)
 * rather than at the lost-agent sweep, which would wait for a silence that never comes. Queued
 * jobs assigned to the agent stay: the new process runs them. Returns the jobs it ended.
 */
export async function endJobsOfRestartedAgent(
  stores: Stores,
  lifecycle: JobLifecycle,
  worker: WorkerActor,
  running: readonly string[],
): Promise<Job[]> {
  const ended: Job[] = [];
  for (const job of await notRunning(stores, worker, running)) {
    const failed = await lifecycle.end(stores, job, 'agent_lost', { reason: 'agent_restarted', actor: worker });
    if (failed) ended.push(failed);
  }
  return ended;
}

/**
 * An agent that runs on says which jobs it runs after a claim whose answer may have been lost
 * (`after_unanswered_claim`): a job the control plane gave it that it leaves out never reached
 * it, so no engine started: it goes back in the queue (`JobLifecycle.requeue`) and runs once,
 * on whichever agent claims it next. Returns the jobs put back.
 */
export async function requeueUnansweredClaims(
  stores: Stores,
  lifecycle: JobLifecycle,
  worker: WorkerActor,
  running: readonly string[],
): Promise<Job[]> {
  const requeued: Job[] = [];
  for (const job of await notRunning(stores, worker, running)) {
    const queued = await lifecycle.requeue(stores, job, worker);
    if (queued) requeued.push(queued);
  }
  return requeued;
}

/** The jobs the control plane thinks `worker` runs that it does not list. */
async function notRunning(stores: Stores, worker: WorkerActor, running: readonly string[]): Promise<Job[]> {
  const processing = await stores.jobs.list(worker.ownerId, { status: 'PROCESSING' });
  return processing.filter((job) => job.claimed_by_worker_id === worker.workerId && !running.includes(job.id));
}
