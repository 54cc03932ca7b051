import type { Job } from '../../domain/records.js';
import { planChanges } from '../../domain/jobResults.js';
import { failedMandatory, type JobAction } from '../../jobs/deployGate.js';
import type { TfeRun } from './records.js';

/** The statuses of a run as the Terraform Cloud protocol names them (those Trellis reaches). */
export const TFE_RUN_STATUSES = [
  'pending',
  'planning',
  'planned',
  'planned_and_finished',
  'policy_checked',
  'policy_override',
  'policy_overridden',
  'post_plan_awaiting_decision',
  'confirmed',
  'apply_queued',
  'applying',
  'applied',
  'errored',
  'canceled',
  'discarded',
] as const;
export type TfeRunStatus = (typeof TFE_RUN_STATUSES)[number];

/** What the status of a run is read from: the run, its plan job, the job applying it, the deploy gate's answer. */
export interface RunFacts {
  run: Pick<TfeRun, 'plan_only' | 'auto_apply' | 'confirmed_at' | 'discarded_at'>;
  plan: Pick<
    Job,
    | 'status'
    | 'execution_metadata'
    | 'approval'
    | 'policy_override'
    | 'claimed_policies'
    | 'created_at'
    | 'claimed_at'
    | 'finished_at'
  >;
  /** The DEPLOY or DESTROY of the plan, the newest (null: none). */
  apply: Pick<Job, 'status' | 'created_at' | 'claimed_at' | 'finished_at'> | null;
  /** Whether the vine requires an approved plan. */
  approvalRequired: boolean;
  /** The deploy gate's answer to applying the plan (`planActions(...).apply`); null: not a plan of a vine. */
  applyAction: JobAction | null;
}

/** Whether the plan found changes: a plan that reported no summary may hide some, so it counts as having them. */
export function runHasChanges(plan: Pick<Job, 'status' | 'execution_metadata'>): boolean {
  if (plan.status !== 'SUCCESS') return false;
  const summary = plan.execution_metadata.plan_summary;
  return summary === undefined ? true : planChanges(summary) > 0;
}

/** The run's status (docs/terraform-cloud.md, "Remote runs", has the table). */
export function runStatus(facts: RunFacts): TfeRunStatus {
  const { run, plan, apply } = facts;
  if (apply !== null) {
    switch (apply.status) {
      case 'QUEUED':
        return 'apply_queued';
      case 'PROCESSING':
        return 'applying';
      case 'SUCCESS':
        return 'applied';
      case 'FAILED':
        return 'errored';
      case 'CANCELLED':
        return 'canceled';
    }
  }
  switch (plan.status) {
    case 'QUEUED':
      return 'pending';
    case 'PROCESSING':
      return 'planning';
    case 'FAILED':
      return 'errored';
    case 'CANCELLED':
      return 'canceled';
    case 'SUCCESS':
      break;
  }
  if (run.discarded_at !== null || plan.approval?.decision === 'rejected') return 'discarded';
  if (run.plan_only || !runHasChanges(plan)) return 'planned_and_finished';
  const failed = failedMandatory(plan).length > 0;
  if (failed && plan.policy_override === null) return 'policy_override';
  const awaitingApproval = facts.approvalRequired && plan.approval?.decision !== 'approved';
  if (awaitingApproval)
    return run.confirmed_at !== null || run.auto_apply ? 'confirmed' : 'post_plan_awaiting_decision';
  if (failed) return 'policy_overridden';
  return (plan.claimed_policies ?? []).length > 0 ? 'policy_checked' : 'planned';
}

/** The statuses in which the plan waits for a person: a yes, an approval, an override, or a discard. */
const WAITING: readonly TfeRunStatus[] = [
  'planned',
  'policy_checked',
  'policy_override',
  'policy_overridden',
  'post_plan_awaiting_decision',
  'confirmed',
];

export interface RunActions {
  'is-cancelable': boolean;
  'is-confirmable': boolean;
  'is-discardable': boolean;
  'is-force-cancelable': boolean;
}

/**
 * What can be done with the run now. Confirmable: the deploy gate lets its plan be applied, or
 * only lacks the vine's approval (a yes then waits for it: `confirmed`). Trellis cancels a job at
 * once, so nothing is ever left for a force-cancel.
 */
export function runActions(facts: RunFacts, status: TfeRunStatus = runStatus(facts)): RunActions {
  const gate = facts.applyAction;
  const gateLets = gate !== null && (gate.allowed || gate.code === 'approval_required');
  const waitsForYes = status === 'planned' || status === 'policy_checked' || status === 'policy_overridden';
  return {
    'is-cancelable': ['pending', 'planning', 'apply_queued', 'applying'].includes(status),
    'is-confirmable':
      gateLets && (waitsForYes || (status === 'post_plan_awaiting_decision' && facts.run.confirmed_at === null)),
    'is-discardable': WAITING.includes(status),
    'is-force-cancelable': false,
  };
}

/** When the run reached each status it went through (`status-timestamps`). */
export function runStatusTimestamps(facts: RunFacts, status: TfeRunStatus = runStatus(facts)): Record<string, string> {
  const { run, plan, apply } = facts;
  const stamps: Record<string, string> = {
    'plan-queueable-at': plan.created_at,
    'plan-queued-at': plan.created_at,
  };
  const set = (key: string, at: string | null | undefined) => {
    if (at) stamps[key] = at;
  };
  set('planning-at', plan.claimed_at);
  if (plan.status === 'SUCCESS') {
    set('planned-at', plan.finished_at);
    if ((plan.claimed_policies ?? []).length > 0) set('policy-checked-at', plan.finished_at);
    if (failedMandatory(plan).length > 0) set('policy-soft-failed-at', plan.finished_at);
    if (status === 'planned_and_finished') set('planned-and-finished-at', plan.finished_at);
  }
  set('confirmed-at', run.confirmed_at ?? apply?.created_at);
  set('discarded-at', status === 'discarded' ? (run.discarded_at ?? plan.approval?.at) : null);
  if (apply !== null) {
    set('apply-queued-at', apply.created_at);
    set('applying-at', apply.claimed_at);
    if (apply.status === 'SUCCESS') set('applied-at', apply.finished_at);
  }
  const last = apply ?? plan;
  if (status === 'errored') set('errored-at', last.finished_at);
  if (status === 'canceled') set('canceled-at', last.finished_at);
  return stamps;
}
