import type { JobStatus } from './enums.js';
import { ConflictError } from './errors.js';
import { type JobTrigger, SPECULATIVE_TRIGGER_TYPES } from './records.js';
import { VINE_JOB_STARTS, type VineJobType, type VineStartMoves } from './vineStateMachine.js';

/** Everything that can happen to a job. Routes and SQL never decide a transition themselves. */
export type JobEvent =
  | 'claim' // an agent took the job
  | 'report_processing' // agent status update that only carries metadata
  | 'report_success'
  | 'report_failed'
  | 'report_cancelled'
  | 'cancel' // a person (or the system, for a job that gives way) cancelled it
  | 'agent_lost' // the agent running it is gone: silent past the lost-job timeout, or destroyed
  | 'start_failed' // the control plane could not start a job it handed out (no identity token)
  | 'unclaim'; // the agent never got the claim's answer: no engine started, the job goes back in the queue

/** DESIGN §3 as data: the only allowed moves. Terminal states accept nothing. */
export const JOB_TRANSITIONS: { readonly [S in JobStatus]: Readonly<Partial<Record<JobEvent, JobStatus>>> } = {
  QUEUED: { claim: 'PROCESSING', cancel: 'CANCELLED' },
  PROCESSING: {
    report_processing: 'PROCESSING',
    report_success: 'SUCCESS',
    report_failed: 'FAILED',
    report_cancelled: 'CANCELLED',
    cancel: 'CANCELLED',
    agent_lost: 'FAILED',
    start_failed: 'FAILED',
    unclaim: 'QUEUED',
  },
  SUCCESS: {},
  FAILED: {},
  CANCELLED: {},
};

/** The job status after `event`, or a `409 invalid_transition`. */
export function transitionJob(from: JobStatus, event: JobEvent): JobStatus {
  const to = JOB_TRANSITIONS[from][event];
  if (to === undefined) {
    throw new ConflictError('invalid_transition', `a ${from} job cannot ${describeJobEvent(event)}`);
  }
  return to;
}

/**
 * The claim as a move of the table above: an agent takes a job in `from` and it is then in `to`,
 * which is also the status of a vine's running job (the claim rule of DESIGN §3 skips vines that
 * have one). The job's vine moves in the same step, as the vine state machine's `job_started`
 * (`vine`, by job type), unless the job's trigger is one of `vineKeptBy`: a speculative plan
 * leaves its vine's status alone. Stores apply these moves; they never spell the statuses themselves.
 */
export interface JobClaimMove {
  readonly from: JobStatus;
  readonly to: JobStatus;
  readonly vine: Readonly<Record<VineJobType, VineStartMoves>>;
  readonly vineKeptBy: readonly JobTrigger['type'][];
}

export const JOB_CLAIM: JobClaimMove = {
  from: 'QUEUED',
  to: transitionJob('QUEUED', 'claim'),
  vine: VINE_JOB_STARTS,
  vineKeptBy: SPECULATIVE_TRIGGER_TYPES,
};

/**
 * The statuses in which a DEPLOY holds on to its plan: queued, running or done. A plan with such
 * a deploy is applied (409 `plan_already_applied`); a failed or cancelled deploy lets it go.
 */
export const PLAN_HOLDING_DEPLOY_STATUSES: readonly JobStatus[] = ['QUEUED', 'PROCESSING', 'SUCCESS'];

export function isTerminalJobStatus(status: JobStatus): boolean {
  return Object.keys(JOB_TRANSITIONS[status]).length === 0;
}

function describeJobEvent(event: JobEvent): string {
  switch (event) {
    case 'claim':
      return 'be claimed';
    case 'report_processing':
      return 'be reported PROCESSING';
    case 'report_success':
      return 'be reported SUCCESS';
    case 'report_failed':
      return 'be reported FAILED';
    case 'report_cancelled':
      return 'be reported CANCELLED';
    case 'cancel':
      return 'be cancelled';
    case 'agent_lost':
      return 'be failed for a lost agent';
    case 'start_failed':
      return 'be failed for not starting';
    case 'unclaim':
      return 'be put back in the queue';
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
}
