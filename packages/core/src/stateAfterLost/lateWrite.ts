import type { WorkerActor } from '../domain/actors.js';
import type { Job } from '../domain/records.js';
import type { Stores } from '../ports/UnitOfWork.js';
import { enqueueNotification, type OutboxDeps } from '../usecases/notificationOutbox.js';

/**
 * Fenced, never-lost state (issue 30). When an agent is cut off longer than the lost-job timeout,
 * the control plane fails its job, while the engine it started may still be applying. Its last
 * state must not be lost: it is still taken from that job's engine (or its agent, pushing the
 * engine's `errored.tfstate` when the link comes back), with the job's own state token, as
 * long as no later job has had the vine. A later job's state always wins: the late write is then
 * kept as a `rejected` version, for recovery, never the current state. Either way the version is
 * `after_lost`, the vine shows `state_after_lost` until a person reviews it, and it is announced.
 */

/** The ended job whose state token the writer holds, when the engine of that job may still write late. */
export async function endedJobOfToken(stores: Stores, worker: WorkerActor, vineId: string): Promise<Job | null> {
  if (worker.stateJobId === undefined) return null;
  const job = await stores.jobs.get(worker.ownerId, worker.stateJobId);
  if (!job || job.vine_id !== vineId || job.claimed_by_worker_id !== worker.workerId) return null;
  // Only a failed job: the control plane ended it (lost, or its agent's restart) while its engine
  // may have been running; a cancelled job's engine has the cancel notice to wind down in.
  return job.status === 'FAILED' ? job : null;
}

export interface LateWriteVerdict {
  after_lost: true;
  rejected: boolean;
  /** Why it was refused, for the answer to the writer; null when accepted. */
  reason: string | null;
}

/**
 * Whether the late write of `job` may become the current state: no later job of the vine runs or
 * holds the lock, none wrote a version since `job` ended, and the state continues the current
 * one (same lineage, a serial no lower).
 */
export async function judgeLateWrite(
  stores: Stores,
  job: Job,
  lockId: string | null,
  header: { serial: number; lineage: string },
): Promise<LateWriteVerdict> {
  const refuse = (reason: string): LateWriteVerdict => ({ after_lost: true, rejected: true, reason });
  const vineId = job.vine_id as string;
  const running = await stores.jobs.list(job.owner_id, { vine_id: vineId, status: 'PROCESSING' });
  if (running.some((other) => other.id !== job.id)) return refuse('a later job of the configuration is running');
  const lock = await stores.states.getLock(job.owner_id, vineId);
  if (lock && lock.lock_id !== lockId)
    return refuse(`the state is locked by ${String(lock.info.Who ?? 'a later run')}`);
  const current = await stores.states.latest(job.owner_id, vineId);
  if (current) {
    const endedAt = Date.parse(job.finished_at ?? job.claimed_at ?? job.created_at);
    if (current.job_id !== job.id && Date.parse(current.created_at) >= endedAt) {
      return refuse('a later version of the state was written after the job was ended');
    }
    if (current.lineage !== header.lineage) return refuse(`the state's lineage is not the current state's`);
    if (header.serial < current.serial) return refuse(`the state's serial is behind the current state's`);
  }
  return { after_lost: true, rejected: false, reason: null };
}

/** `state.after_lost`, in the unit of work that recorded the late version. */
export async function announceLateState(stores: Stores, deps: OutboxDeps, job: Job): Promise<void> {
  await enqueueNotification(stores, deps, {
    event: 'state.after_lost',
    owner_id: job.owner_id,
    job_id: job.id,
    vine_id: job.vine_id,
    vineyard_id: job.vineyard_id,
  });
}
