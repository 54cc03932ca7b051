/**
 * Policy checks and approvals (issue 15): the guards between a plan and its deploy.
 *
 * A policy is a Rego module that the agent evaluates with Open Policy Agent against the plan's
 * JSON after every PLAN; its results travel back in `execution_metadata.policy_results`. A DEPLOY
 * of a plan with a failed mandatory policy needs an override, and a DEPLOY of a plan of a vine
 * that requires approval needs an approval.
 */
import type { JobResults } from './jobResults.js';

export const POLICY_ENFORCEMENTS = ['advisory', 'mandatory'] as const;
export type PolicyEnforcement = (typeof POLICY_ENFORCEMENTS)[number];

/** What the claim of a PLAN carries: each policy that applies to the job's vine, at its current version. */
export interface PolicyToEvaluate {
  id: string;
  version: number;
  name: string;
  enforcement: PolicyEnforcement;
  /** The Rego source of that version. */
  module: string;
}

/** One policy's result on one plan, as the agent reports it in `execution_metadata.policy_results`. */
export type PolicyResult = {
  policy_id: string;
  version: number;
  name: string;
  enforcement: PolicyEnforcement;
  passed: boolean;
  /** The `deny` messages (empty when passed). */
  messages: string[];
};

/** Who decided, and when. */
export interface PlanDecisionBy {
  user_id: string;
  email: string | null;
  at: string;
}

/** A person's approval or rejection of a plan, kept on the plan job. */
export interface PlanApproval extends PlanDecisionBy {
  decision: 'approved' | 'rejected';
  comment: string | null;
}

/** An admin's override of the plan's failed mandatory policies, kept on the plan job. */
export interface PolicyOverride extends PlanDecisionBy {
  reason: string;
}

/** A vine's approval setting; null on the vine: no approval needed. */
export interface ApprovalSetting {
  required: boolean;
  /** The person who queued the plan cannot approve it. */
  separate_approver: boolean;
}

/** The policy results a job's metadata holds (none when the agent reported none); typed when reported. */
export function policyResultsOf(metadata: Pick<JobResults, 'policy_results'>): PolicyResult[] {
  return metadata.policy_results ?? [];
}

/** The mandatory policies a plan failed: a DEPLOY of it needs an override. */
export function failedMandatoryPolicies(metadata: Pick<JobResults, 'policy_results'>): PolicyResult[] {
  return policyResultsOf(metadata).filter((r) => r.enforcement === 'mandatory' && !r.passed);
}

/** A policy version a claim carried to its agent (issue 23): each needs a result in the job's report. */
export interface ClaimedPolicy {
  policy_id: string;
  version: number;
  name: string;
  enforcement: PolicyEnforcement;
}

/** What the job records of a policy its claim carried (issue 23). */
export function claimedPolicy(policy: PolicyToEvaluate): ClaimedPolicy {
  return { policy_id: policy.id, version: policy.version, name: policy.name, enforcement: policy.enforcement };
}
