import type { WorkerStatus } from './enums.js';
import { ConflictError } from './errors.js';

export type WorkerEvent =
  | 'heartbeat' // the agent said it is alive
  | 'job_claimed'
  | 'job_finished'
  | 'silence' // no heartbeat for the heartbeat timeout
  | 'destroyed'; // a DESTROY_WORKER job succeeded

export const WORKER_TRANSITIONS: {
  readonly [S in WorkerStatus]: Readonly<Partial<Record<WorkerEvent, WorkerStatus>>>;
} = {
  OFFLINE: { heartbeat: 'ONLINE', destroyed: 'DESTROYED', job_claimed: 'BUSY' },
  ONLINE: { heartbeat: 'ONLINE', job_claimed: 'BUSY', silence: 'OFFLINE', destroyed: 'DESTROYED' },
  BUSY: { heartbeat: 'BUSY', job_finished: 'ONLINE', silence: 'OFFLINE', destroyed: 'DESTROYED' },
  DESTROYED: {},
};

export function transitionWorker(from: WorkerStatus, event: WorkerEvent): WorkerStatus {
  const to = WORKER_TRANSITIONS[from][event];
  if (to === undefined) {
    throw new ConflictError('invalid_transition', `a ${from} worker cannot take ${event}`);
  }
  return to;
}

/**
 * The status a worker has now, derived from what is stored (DESIGN §3): the same answer the
 * transition table gives when replaying heartbeats, claims and silences.
 */
export function deriveWorkerStatus(
  worker: { last_heartbeat: string | null; destroyed_at: string | null },
  hasProcessingJob: boolean,
  now: Date,
  heartbeatTimeoutSeconds: number,
): WorkerStatus {
  if (worker.destroyed_at !== null) return 'DESTROYED';
  if (worker.last_heartbeat === null) return 'OFFLINE';
  const silentMs = now.getTime() - Date.parse(worker.last_heartbeat);
  if (silentMs > heartbeatTimeoutSeconds * 1000) return 'OFFLINE';
  return hasProcessingJob ? 'BUSY' : 'ONLINE';
}
