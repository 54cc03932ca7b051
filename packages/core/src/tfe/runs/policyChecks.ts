import type { UserActor } from '../../domain/actors.js';
import { NotFoundError } from '../../domain/errors.js';
import { type PolicyResult, policyResultsOf } from '../../domain/policies.js';
import { isSpeculativeTrigger, type Job } from '../../domain/records.js';
import { roleAllows } from '../../domain/roles.js';
import { failedMandatory, uncheckedPolicies } from '../../jobs/deployGate.js';
import { Access } from '../../usecases/Access.js';
import type { CoreDeps } from '../../usecases/CoreDeps.js';
import type { PlanReviewUseCases } from '../../policies/PlanReviewUseCases.js';
import type { TfePhaseUseCases } from './phases.js';
import { planJobIdOf, runPolicyCheckId } from './records.js';

/** go-tfe's `PolicyStatus` values a Trellis policy check takes. */
export type PolicyCheckStatus = 'queued' | 'passed' | 'soft_failed' | 'overridden' | 'errored' | 'unreachable';

/** The reason recorded with an override made through the protocol (the CLI sends none). */
export const PROTOCOL_OVERRIDE_REASON = 'overridden from the stock CLI (Terraform Cloud protocol)';

/**
 * A run's policy check (issue 27): Trellis's OPA results of the plan (`policy_results`, checked
 * against the policies its claim recorded) shown as one TFE policy check, `polchk-<plan job id>`.
 * A failed mandatory policy is `soft_failed` (an admin may override it, as in Trellis), then
 * `overridden`; a policy the agent gave no valid result of is `errored`; the plan still running,
 * `queued`; a plan that failed or was cancelled before its policies were evaluated, `unreachable`.
 */
export interface PolicyCheckView {
  id: string;
  planJobId: string;
  ownerId: string;
  status: PolicyCheckStatus;
  results: PolicyResult[];
  /** The mandatory policies that failed. */
  failed: PolicyResult[];
  counts: { passed: number; mandatoryFailed: number; advisoryFailed: number };
  /** Whether the check can be overridden now (soft failed, the plan still appliable), by an admin. */
  overridable: boolean;
  /** Whether the reader may override (an admin of the plan's owner). */
  canOverride: boolean;
  statusTimestamps: Record<string, string>;
}

/** Whether the plan has a policy check: its claim carried policies, or it reported results. */
export function hasPolicyCheck(plan: Pick<Job, 'claimed_policies' | 'execution_metadata'>): boolean {
  return (plan.claimed_policies ?? []).length > 0 || policyResultsOf(plan.execution_metadata).length > 0;
}

/** The status of the plan's policy check (see `PolicyCheckView`). */
export function policyCheckStatusOf(plan: Job): PolicyCheckStatus {
  if (plan.status === 'QUEUED' || plan.status === 'PROCESSING') return 'queued';
  const complete = uncheckedPolicies(plan).length === 0 && policyResultsOf(plan.execution_metadata).length > 0;
  if (plan.status !== 'SUCCESS' && !complete) return 'unreachable';
  if (uncheckedPolicies(plan).length > 0) return 'errored';
  if (failedMandatory(plan).length === 0) return 'passed';
  return plan.policy_override === null ? 'soft_failed' : 'overridden';
}

/** The policy check of a plan, as `canOverride` (the reader's role) sees it; null: it has none. */
export function policyCheckOf(plan: Job, canOverride: boolean, applied: boolean): PolicyCheckView | null {
  if (!hasPolicyCheck(plan)) return null;
  const status = policyCheckStatusOf(plan);
  const results = policyResultsOf(plan.execution_metadata);
  const failed = failedMandatory(plan);
  const times: Record<string, string> = {};
  if (plan.claimed_at) times['queued-at'] = plan.claimed_at;
  const decidedAt = plan.finished_at;
  if (decidedAt && status === 'passed') times['passed-at'] = decidedAt;
  if (decidedAt && (status === 'soft_failed' || status === 'overridden')) times['soft-failed-at'] = decidedAt;
  if (decidedAt && status === 'errored') times['errored-at'] = decidedAt;
  const appliable = plan.status === 'SUCCESS' && !isSpeculativeTrigger(plan.trigger) && !applied;
  return {
    id: runPolicyCheckId(plan.id),
    planJobId: plan.id,
    ownerId: plan.owner_id,
    status,
    results,
    failed,
    counts: {
      passed: results.filter((result) => result.passed).length,
      mandatoryFailed: failed.length,
      advisoryFailed: results.filter((result) => !result.passed).length - failed.length,
    },
    overridable: status === 'soft_failed' && appliable && canOverride,
    canOverride,
    statusTimestamps: times,
  };
}

/**
 * What the CLI prints under "Organization Policy Check:" (`GET /policy-checks/:id/output`), in
 * the manner of Sentinel's report: the overall result, then each policy with its enforcement and
 * OPA's `deny` messages.
 */
export function policyCheckOutput(check: PolicyCheckView): string {
  const lines: string[] = [];
  const passed = check.status === 'passed';
  lines.push(`OPA Result: ${passed || check.status === 'overridden' ? 'true' : 'false'}`, '');
  if (check.status === 'soft_failed') {
    lines.push(
      `${check.failed.length === 1 ? 'A mandatory policy' : `${check.failed.length} mandatory policies`} failed: the plan may not be applied unless an admin overrides the check.`,
      '',
    );
  } else if (check.status === 'overridden') {
    lines.push('A mandatory policy failed and an admin overrode the check: the plan may be applied.', '');
  } else if (check.status === 'errored') {
    lines.push('The agent gave no valid result of every policy: plan again.', '');
  }
  lines.push(`${check.results.length} ${check.results.length === 1 ? 'policy' : 'policies'} evaluated.`);
  check.results.forEach((result, i) => {
    lines.push('', `## Policy ${i + 1}: ${result.name} (${result.enforcement}, version ${result.version})`, '');
    lines.push(`Result: ${result.passed ? 'true' : 'false'}`);
    if (result.messages.length > 0) lines.push('');
    for (const message of result.messages) lines.push(`DENY - ${message}`);
  });
  return `${lines.join('\n')}\n`;
}

/** `policy-checks` of a run: list, read, output and override. */
export class TfePolicyCheckUseCases {
  private readonly access: Access;

  constructor(
    private readonly deps: Pick<CoreDeps, 'uow'>,
    private readonly phases: TfePhaseUseCases,
    private readonly reviews: PlanReviewUseCases,
  ) {
    this.access = new Access(deps);
  }

  /** `GET /runs/:id/policy-checks`: none, or the run's one. */
  async list(actor: UserActor, runId: unknown): Promise<PolicyCheckView[]> {
    const check = await this.checkOf(actor, planJobIdOf(runId, 'run'));
    return check ? [check] : [];
  }

  /** `GET /policy-checks/:id` (and its output). */
  async read(actor: UserActor, id: unknown): Promise<PolicyCheckView> {
    const check = await this.checkOf(actor, planJobIdOf(id, 'policyCheck'));
    if (!check) throw new NotFoundError('job');
    return check;
  }

  /** `GET /policy-checks/:id/output`: the text the CLI prints. */
  async output(actor: UserActor, id: unknown): Promise<string> {
    return policyCheckOutput(await this.read(actor, id));
  }

  /** `POST /policy-checks/:id/actions/override`: Trellis's override of the plan (admins; audited). */
  async override(actor: UserActor, id: unknown): Promise<PolicyCheckView> {
    const check = await this.read(actor, id);
    await this.reviews.override(actor, check.planJobId, { reason: PROTOCOL_OVERRIDE_REASON });
    return this.read(actor, id);
  }

  private async checkOf(actor: UserActor, planJobId: string | null): Promise<PolicyCheckView | null> {
    const { record, scope } = await this.phases.locatePlan(actor, planJobId);
    const canOverride = await this.mayOverride(actor, record.owner_id);
    return this.deps.uow.read(scope, async (stores) => {
      const plan = await stores.jobs.get(record.owner_id, record.id);
      if (!plan) throw new NotFoundError('job');
      const applied = (await stores.jobs.listDeploysOfPlan(plan.owner_id, plan.id)).length > 0;
      return policyCheckOf(plan, canOverride, applied);
    });
  }

  /** Trellis's override rule: the owner of a personal record, or an admin (or owner) of the organization. */
  private async mayOverride(actor: UserActor, ownerId: string): Promise<boolean> {
    if (ownerId === actor.userId && !actor.apiToken?.orgId) return true;
    const membership = (await this.access.memberships(actor)).find((candidate) => candidate.org_id === ownerId);
    return membership !== undefined && roleAllows(membership.role, 'plans.override');
  }
}
