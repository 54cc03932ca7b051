import type { CoreDeps } from '../../usecases/CoreDeps.js';
import type { PlanReviewUseCases } from '../../policies/PlanReviewUseCases.js';
import { TfePhaseUseCases } from './phases.js';
import { TfeRunQueueUseCases } from './phasesQueue.js';
import { TfePolicyCheckUseCases } from './policyChecks.js';
import { TfeRunLogs } from './runLogs.js';

/** What a run's phases answer (issue 27): plans and applies, their logs, policy checks, the queue. */
export interface TfeRunPhases {
  phases: TfePhaseUseCases;
  logs: TfeRunLogs;
  policyChecks: TfePolicyCheckUseCases;
  queue: TfeRunQueueUseCases;
}

export function createTfeRunPhases(deps: CoreDeps, reviews: PlanReviewUseCases): TfeRunPhases {
  const phases = new TfePhaseUseCases(deps);
  return {
    phases,
    logs: new TfeRunLogs(deps),
    policyChecks: new TfePolicyCheckUseCases(deps, phases, reviews),
    queue: new TfeRunQueueUseCases(deps),
  };
}
