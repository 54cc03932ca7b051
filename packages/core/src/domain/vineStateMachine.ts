import { type JobType, VINE_STATUSES, type VineStatus } from './enums.js';
import { ConflictError } from './errors.js';

/** Job types that act on a vine (DESTROY_WORKER acts on a worker). */
export type VineJobType = Exclude<JobType, 'DESTROY_WORKER'>;

export type VineEvent =
  | { type: 'job_started'; jobType: VineJobType }
  | { type: 'job_succeeded'; jobType: VineJobType }
  | { type: 'job_failed' }
  | { type: 'job_cancelled'; restore: VineStatus };

const IN_PROGRESS: Readonly<Record<VineJobType, VineStatus>> = {
  PLAN: 'PLANNING',
  DEPLOY: 'DEPLOYING',
  DESTROY: 'DESTROYING',
};

const DONE: Readonly<Record<VineJobType, VineStatus>> = {
  PLAN: 'PLANNED',
  DEPLOY: 'DEPLOYED',
  DESTROY: 'DESTROYED',
};

const SETTLED: readonly VineStatus[] = ['NEW', 'PLANNED', 'DEPLOYED', 'DESTROYED', 'FAILED'];

/**
 * Which events each vine status accepts. A job may start from any settled status (one job runs
 * at a time per vine, so a vine is never "in progress" when the next job starts); a job ends only
 * from the in-progress status its type put the vine in.
 */
export const VINE_TRANSITIONS: { readonly [S in VineStatus]: readonly VineEvent['type'][] } = {
  NEW: ['job_started'],
  PLANNED: ['job_started'],
  DEPLOYED: ['job_started'],
  DESTROYED: ['job_started'],
  FAILED: ['job_started'],
  PLANNING: ['job_succeeded', 'job_failed', 'job_cancelled'],
  DEPLOYING: ['job_succeeded', 'job_failed', 'job_cancelled'],
  DESTROYING: ['job_succeeded', 'job_failed', 'job_cancelled'],
};

export function transitionVine(from: VineStatus, event: VineEvent): VineStatus {
  if (!VINE_TRANSITIONS[from].includes(event.type)) {
    throw new ConflictError('invalid_transition', `a ${from} vine cannot take ${event.type}`);
  }
  switch (event.type) {
    case 'job_started':
      return IN_PROGRESS[event.jobType];
    case 'job_succeeded':
      if (IN_PROGRESS[event.jobType] !== from) {
        throw new ConflictError('invalid_transition', `a ${from} vine cannot finish a ${event.jobType} job`);
      }
      return DONE[event.jobType];
    case 'job_failed':
      return 'FAILED';
    case 'job_cancelled':
      return SETTLED.includes(event.restore) ? event.restore : 'NEW';
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
}

/** Per vine status, the status a job's start moves the vine to; absent: it cannot start from there. */
export type VineStartMoves = Readonly<Partial<Record<VineStatus, VineStatus>>>;

/**
 * `job_started` of the table above as data, by job type, for a store that moves the vine in the
 * same statement that claims the job (the claim's `JOB_CLAIM.vine`).
 */
export const VINE_JOB_STARTS: Readonly<Record<VineJobType, VineStartMoves>> = {
  PLAN: startMoves('PLAN'),
  DEPLOY: startMoves('DEPLOY'),
  DESTROY: startMoves('DESTROY'),
};

function startMoves(jobType: VineJobType): VineStartMoves {
  const moves: Partial<Record<VineStatus, VineStatus>> = {};
  for (const status of VINE_STATUSES) {
    if (VINE_TRANSITIONS[status].includes('job_started')) {
      moves[status] = transitionVine(status, { type: 'job_started', jobType });
    }
  }
  return moves;
}
