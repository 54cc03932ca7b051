import { isSpeculativeTrigger, type Job } from './records.js';

/**
 * How a job may use its vine's state in the control plane's backend (issue 23): `write` reads,
 * locks and writes it; `read` only reads it. A speculative plan (a pull request's plan, a drift
 * check) is never applied, so it has no reason to write or lock the state; its agent plans with
 * `-lock=false`, and the state routes refuse its writes and locks (`403 state_read_only`), so code
 * from a pull request cannot replace or hold the vine's state.
 */
export const STATE_ACCESSES = ['read', 'write'] as const;
export type StateAccess = (typeof STATE_ACCESSES)[number];

export function stateAccessOf(job: Pick<Job, 'trigger'>): StateAccess {
  return isSpeculativeTrigger(job.trigger) ? 'read' : 'write';
}
