import type { WorkerActor } from '../domain/actors.js';
import { ConflictError } from '../domain/errors.js';
import { ownerScope, type Stores } from '../ports/UnitOfWork.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';

/**
 * An end report the lifecycle refused (`error`), rethrown: when it was a `409` (the job had ended
 * already), first the lock its wound-down engine left is released (`releaseLockAfterWindDown`).
 */
export async function refusedEndReport(
  deps: CoreDeps,
  worker: WorkerActor,
  jobId: string,
  error: unknown,
): Promise<never> {
  if (error instanceof ConflictError) {
    await deps.uow.run(ownerScope(worker.ownerId), (stores) => releaseLockAfterWindDown(stores, worker, jobId));
  }
  throw error;
}

/**
 * The final report of a job that a person cancelled while it ran (`409`: it had ended already).
 * Its engine was interrupted and has exited by now (the agent reports only then), so a lock it
 * still held (it was killed at the end of the cancel grace, or crashed) can never be released by
 * it: it is released here, unless another job of the vine runs now (the lock may be that job's)
 * or it is a person's lock taken through the Terraform Cloud protocol. Returns whether it was.
 */
export async function releaseLockAfterWindDown(stores: Stores, worker: WorkerActor, jobId: string): Promise<boolean> {
  const job = await stores.jobs.get(worker.ownerId, jobId);
  if (job?.status !== 'CANCELLED' || job.claimed_by_worker_id !== worker.workerId || job.vine_id === null) return false;
  const running = await stores.jobs.list(worker.ownerId, { vine_id: job.vine_id, status: 'PROCESSING' });
  if (running.length > 0) return false;
  const lock = await stores.states.getLock(worker.ownerId, job.vine_id);
  if (!lock || lock.info.Operation === 'TerraformCloudLock') return false;
  return stores.states.releaseLock(worker.ownerId, job.vine_id, lock.lock_id);
}
