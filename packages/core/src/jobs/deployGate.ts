/**
 * The deploy gate (issue 23): the one rule that decides whether a change may reach
 * infrastructure. Every job that changes it passes here when it is queued: a DEPLOY (of a plan or
 * not, by a person or by `auto_deploy`) and a DESTROY (of a destroy plan or not). The web and the
 * CLI read the same rule through `planActions`, so they never offer what the API refuses.
 *
 * - A change without a plan is refused `plan_required` where a plan must be looked at first: a
 *   DEPLOY on a vine with mandatory policies or a required approval, a DESTROY on a vine with a
 *   required approval (a DESTROY without a plan still has its policies evaluated by the agent, on
 *   the destroy plan it makes, before it destroys anything).
 * - A change of a plan needs the plan deployable: not rejected, every policy its claim carried
 *   answered by a well-formed result (else `policy_unchecked`: plan again), no failed mandatory
 *   policy without an admin's override, and an approval where the vine requires one.
 * - With `separate_approver`, the plan's creator cannot approve it; of a plan the system queued
 *   (a run trigger's, a push's), the person who caused it is its creator.
 */
import type { UserActor } from '../domain/actors.js';
import {
  ConflictError,
  type DomainError,
  ForbiddenError,
  NotFoundError,
  PolicyFailedError,
  ValidationError,
} from '../domain/errors.js';
import type { ApprovalSetting, ClaimedPolicy, PolicyResult } from '../domain/policies.js';
import { isSpeculativeTrigger, type Job, type Vine } from '../domain/records.js';
import type { Stores } from '../ports/UnitOfWork.js';
import { configHash } from '../snapshot/configSnapshot.js';
import { snapshotOfPlanNow } from './changeSnapshot.js';

/** The job types that change infrastructure. */
export type ChangeType = 'DEPLOY' | 'DESTROY';

/** What the gate knows of a vine: its approval setting and how many mandatory policies apply to it. */
export interface VineGuards {
  approval: ApprovalSetting | null;
  mandatoryPolicies: number;
}

/** The guards of a vine, read in the caller's unit of work. */
export async function vineGuardsOf(
  stores: Stores,
  vine: { owner_id: string; vineyard_id: string | null; approval: ApprovalSetting | null },
): Promise<VineGuards> {
  const policies = await stores.policies.listApplicable(vine.owner_id, vine.vineyard_id);
  return {
    approval: vine.approval,
    mandatoryPolicies: policies.filter((policy) => policy.enforcement === 'mandatory').length,
  };
}

/** Why a change without a plan may not be queued on a vine with these guards; null: it may. */
export function planlessChangeProblem(
  type: ChangeType,
  guards: VineGuards,
  name = 'the-configuration',
): DomainError | null {
  const approval = guards.approval?.required === true;
  if (type === 'DESTROY') {
    if (!approval) return null;
    return new ConflictError(
      'plan_required',
      `this configuration destroys only an approved destroy plan: plan first: \`trellis plan ${name} --destroy\`, have that plan approved (\`trellis approve\` with its job id), then apply it: \`trellis destroy ${name} --plan\` with its job id`,
    );
  }
  if (!approval && guards.mandatoryPolicies === 0) return null;
  const why = [
    ...(guards.mandatoryPolicies > 0
      ? [
          `${guards.mandatoryPolicies} mandatory ${guards.mandatoryPolicies === 1 ? 'policy applies' : 'policies apply'}`,
        ]
      : []),
    ...(approval ? ['deploys need an approved plan'] : []),
  ].join(' and ');
  return new ConflictError(
    'plan_required',
    `this configuration deploys only a plan (${why}): plan first: \`trellis plan ${name}\`, then deploy that plan: \`trellis deploy ${name} --plan\` with its job id`,
  );
}

/**
 * The claimed policies the plan has no well-formed result of: none reported, or one whose
 * policy, version or enforcement is not the claimed one. Empty for a plan whose claim recorded
 * none (a plan claimed before the claims were recorded is judged by its results alone).
 */
export function uncheckedPolicies(plan: Pick<Job, 'claimed_policies' | 'execution_metadata'>): ClaimedPolicy[] {
  const claimed = plan.claimed_policies ?? [];
  const results = plan.execution_metadata.policy_results ?? [];
  return claimed.filter((policy) => !results.some((result) => answers(result, policy)));
}

function answers(result: PolicyResult, policy: ClaimedPolicy): boolean {
  return (
    result.policy_id === policy.policy_id &&
    result.version === policy.version &&
    result.enforcement === policy.enforcement
  );
}

/**
 * The mandatory policies the plan failed, by the claim's enforcement where the claim recorded one
 * (an agent cannot turn a mandatory policy advisory by reporting it so).
 */
export function failedMandatory(plan: Pick<Job, 'claimed_policies' | 'execution_metadata'>): PolicyResult[] {
  const claimed = plan.claimed_policies;
  return (plan.execution_metadata.policy_results ?? []).filter((result) => {
    if (result.passed) return false;
    const carried = claimed?.find((policy) => policy.policy_id === result.policy_id);
    return (carried?.enforcement ?? result.enforcement) === 'mandatory';
  });
}

/**
 * Why the plan (a successful, non-speculative PLAN of the vine, checked by the caller) may not be
 * applied on a vine with this approval setting; null: it may.
 */
export function planGateProblem(plan: Job, approval: ApprovalSetting | null): DomainError | null {
  if (plan.approval?.decision === 'rejected') {
    return new ConflictError(
      'plan_rejected',
      `this plan was rejected by ${plan.approval.email ?? plan.approval.user_id}${plan.approval.comment ? ` (${plan.approval.comment})` : ''}; plan again`,
    );
  }
  const unchecked = uncheckedPolicies(plan);
  if (unchecked.length > 0) {
    return new ConflictError(
      'policy_unchecked',
      `the agent reported no valid result of ${unchecked.map((policy) => `${policy.name} (version ${policy.version})`).join(', ')} for this plan, so it was never checked: plan again: \`trellis plan ${plan.config_snapshot.vine?.name ?? 'the-configuration'}\``,
    );
  }
  const failed = failedMandatory(plan);
  if (failed.length > 0 && plan.policy_override === null) {
    return new PolicyFailedError(
      failed.map((policy) => ({
        policy_id: policy.policy_id,
        version: policy.version,
        name: policy.name,
        messages: policy.messages,
      })),
    );
  }
  if (approval?.required && plan.approval?.decision !== 'approved') {
    return new ConflictError(
      'approval_required',
      'this configuration deploys only an approved plan, and this plan is not approved',
    );
  }
  return null;
}

/** The gate of a change of `plan`: throws its problem. */
export function checkPlanGate(plan: Job, approval: ApprovalSetting | null): void {
  const problem = planGateProblem(plan, approval);
  if (problem !== null) throw problem;
}

/** The gate of a change without a plan: throws its problem. */
export function checkPlanlessChange(type: ChangeType, guards: VineGuards, name?: string): void {
  const problem = planlessChangeProblem(type, guards, name);
  if (problem !== null) throw problem;
}

/** A DEPLOY applies a plan of the vine's configuration; a DESTROY, a destroy plan. */
export function planKindProblem(type: ChangeType, plan: Job): DomainError | null {
  const destroyPlan = plan.config_snapshot.destroy === true;
  const name = plan.config_snapshot.vine?.name ?? 'the-configuration';
  if (type === 'DESTROY' && !destroyPlan) {
    return new ConflictError(
      'plan_kind_mismatch',
      `a DESTROY applies only a destroy plan: plan the destruction first: \`trellis plan ${name} --destroy\``,
    );
  }
  if (type === 'DEPLOY' && destroyPlan) {
    return new ConflictError(
      'plan_kind_mismatch',
      `this plan is a destroy plan: it is applied by a DESTROY (\`trellis destroy ${name} --plan ${plan.id}\`), not a deploy`,
    );
  }
  return null;
}

/**
 * Who counts as the creator of a plan for the separate-approver rule: the person who queued it,
 * else (the system queued it) the person whose action caused it.
 */
export function creatorOf(plan: Pick<Job, 'created_by' | 'caused_by'>): string | null {
  return plan.created_by ?? plan.caused_by;
}

/** Why `user` may not approve the plan on a vine with this setting (the separate approver); null: they may. */
export function approverProblem(plan: Job, approval: ApprovalSetting | null, user: UserActor): DomainError | null {
  if (approval?.separate_approver && creatorOf(plan) === user.userId) {
    return new ForbiddenError(
      'separate_approver_required',
      plan.created_by === null
        ? 'this configuration needs a separate approver: the plan was caused by you (your deploy or push queued it), so someone else must approve it'
        : 'this configuration needs a separate approver: the person who queued the plan cannot approve it',
    );
  }
  return null;
}

/** One thing a person may or may not do with a job, and why not. */
export interface JobAction {
  allowed: boolean;
  /** The problem code the API would answer; absent when allowed. */
  code?: string;
  reason?: string;
}

/** What a person may do with a plan (`JobView.actions`): the gate's rule, nothing of its own. */
export interface PlanActions {
  /** Apply the plan: a DEPLOY of it, or a DESTROY of a destroy plan. */
  apply: JobAction;
  approve: JobAction;
  reject: JobAction;
  override: JobAction;
}

/** The facts `planActions` judges by, read by the caller. */
export interface PlanFacts {
  plan: Job;
  approval: ApprovalSetting | null;
  /** The plan's configuration is still the vine's. */
  current: boolean;
  /** A DEPLOY or DESTROY already applies it. */
  applied: boolean;
  hasArtifact: boolean;
  user: UserActor;
  may: { run: boolean; approve: boolean; override: boolean };
}

const allowed: JobAction = { allowed: true };
const refused = (code: string, reason: string): JobAction => ({ allowed: false, code, reason });
const fromProblem = (problem: DomainError | null): JobAction =>
  problem === null ? allowed : refused(problem.code, problem.message);

/** The actions of a plan for one person; null for a job that is not a plan of a vine. */
export function planActions(facts: PlanFacts): PlanActions | null {
  const { plan } = facts;
  if (plan.job_type !== 'PLAN' || plan.vine_id === null) return null;
  const closed = closedPlan(facts);
  if (closed !== null) return { apply: closed, approve: closed, reject: closed, override: closed };
  const decided = plan.approval !== null;
  const role = (may: boolean, action: string): JobAction | null =>
    may ? null : refused('insufficient_role', `your role in this organization may not ${action}`);
  const approve =
    role(facts.may.approve, 'approve plans') ??
    (decided ? refused('plan_already_decided', `the plan was already ${plan.approval?.decision}`) : null) ??
    (facts.current ? null : refused('plan_stale', 'the configuration changed since this plan was made; plan again')) ??
    fromProblem(approverProblem(plan, facts.approval, facts.user));
  const reject =
    role(facts.may.approve, 'reject plans') ??
    (decided ? refused('plan_already_decided', `the plan was already ${plan.approval?.decision}`) : allowed);
  const override =
    role(facts.may.override, 'override policies') ??
    (failedMandatory(plan).length === 0
      ? refused('no_failed_policies', 'the plan failed no mandatory policy')
      : plan.policy_override !== null
        ? refused('plan_already_overridden', "the plan's failed policies were already overridden")
        : allowed);
  const apply =
    role(facts.may.run, 'run jobs') ??
    (facts.hasArtifact ? null : refused('plan_not_ready', 'the plan job has no plan artifact')) ??
    (facts.current ? null : refused('plan_stale', 'the configuration changed since this plan was made; plan again')) ??
    fromProblem(planGateProblem(plan, facts.approval));
  return { apply, approve, reject, override };
}

/** A plan that can never be applied, whoever asks: why. */
function closedPlan(facts: PlanFacts): JobAction | null {
  const { plan } = facts;
  if (isSpeculativeTrigger(plan.trigger)) {
    return refused('plan_speculative', 'a speculative plan (a drift check, a pull request plan) is never applied');
  }
  if (plan.status !== 'SUCCESS') return refused('plan_not_ready', `the plan has not succeeded (it is ${plan.status})`);
  if (facts.applied) return refused('plan_already_applied', 'this plan is already applied or being applied');
  return null;
}

/**
 * The gate of a change of the vine queued now, in the unit of work that queues it: with a plan,
 * the plan checks of DESIGN §3 (of this vine, not speculative, succeeded with its artifact, not
 * applied yet, of the same configuration `hash`) and the plan's gate; without one, the planless
 * rule. `lockedPlan`: the plan as this unit of work holds it locked (read `FOR UPDATE`, or written:
 * it just ended, or was just decided), so it is not read again.
 */
export async function checkChange(
  stores: Stores,
  change: {
    type: ChangeType;
    vine: { id: string; name: string; owner_id: string; vineyard_id: string | null; approval: ApprovalSetting | null };
    planJobId: string | null;
    hash: string;
    lockedPlan?: Job;
  },
): Promise<void> {
  const { type, vine, planJobId, lockedPlan } = change;
  if (planJobId === null) {
    checkPlanlessChange(type, await vineGuardsOf(stores, vine), vine.name);
    return;
  }
  // Locked: a decision on the plan (a rejection) made meanwhile is waited for and seen.
  const plan = lockedPlan?.id === planJobId ? lockedPlan : await stores.jobs.getForUpdate(vine.owner_id, planJobId);
  if (!plan) throw new NotFoundError('plan_job', 'plan_job_not_found', 'plan job not found');
  if (plan.job_type !== 'PLAN' || plan.vine_id !== vine.id) {
    throw new ValidationError('plan_job_id is not a PLAN job of this configuration', [
      { path: 'plan_job_id', message: 'must be a PLAN job of the same configuration' },
    ]);
  }
  if (isSpeculativeTrigger(plan.trigger)) {
    const what = plan.trigger.type === 'drift' ? 'a drift check' : "a pull request's plan";
    throw new ConflictError(
      'plan_speculative',
      `this plan is ${what}: speculative plans (drift checks, pull request plans) are never deployed; plan again`,
    );
  }
  const kind = planKindProblem(type, plan);
  if (kind !== null) throw kind;
  if (plan.status !== 'SUCCESS' || !(await stores.planArtifacts.get(vine.owner_id, plan.id))) {
    throw new ConflictError('plan_not_ready', 'the plan job has not succeeded with a plan artifact');
  }
  if ((await stores.jobs.listDeploysOfPlan(vine.owner_id, plan.id)).length > 0) {
    throw new ConflictError('plan_already_applied', 'this plan is already applied or being applied');
  }
  if (plan.config_hash !== change.hash) {
    throw new ConflictError('plan_stale', 'the configuration changed since this plan was made; plan again');
  }
  checkPlanGate(plan, vine.approval);
}

/**
 * The facts of `planActions` read in one unit of work: the vine, whether it applies the plan, its
 * artifact. `read`: the plan's vine and the jobs applying it, when the caller has read them in the
 * same unit of work already.
 */
export async function planFactsOf(
  stores: Stores,
  plan: Job,
  user: UserActor,
  may: PlanFacts['may'],
  read?: { vine: Vine; deploys: readonly Job[] },
): Promise<PlanFacts | null> {
  if (plan.job_type !== 'PLAN' || plan.vine_id === null) return null;
  const known = read?.vine.id === plan.vine_id ? read : null;
  const vine = known?.vine ?? (await stores.vines.get(plan.owner_id, plan.vine_id));
  if (!vine) return null;
  const applying = known?.deploys ?? (await stores.jobs.listDeploysOfPlan(plan.owner_id, plan.id));
  const artifact = await stores.planArtifacts.get(plan.owner_id, plan.id);
  return {
    plan,
    approval: vine.approval,
    current: planIsCurrent(plan, vine),
    applied: applying.length > 0,
    hasArtifact: artifact !== null,
    user,
    may,
  };
}

/**
 * Whether the plan's configuration is still the vine's: a git-driven plan is of one commit (stale
 * when the vine changed, not when the branch moved on); a remote run's plan is of its uploaded
 * configuration version (stale when the vine's variables, engine or identity changed); a destroy
 * plan compares as one (`snapshotOfPlanNow`).
 */
export function planIsCurrent(plan: Pick<Job, 'config_snapshot' | 'config_hash'>, vine: Vine): boolean {
  return configHash(snapshotOfPlanNow(vine, plan)) === plan.config_hash;
}

/** What queueing a change of the vine without a plan would meet at the gate (the vine page's offers). */
export interface PlanlessActions {
  deploy: JobAction;
  destroy: JobAction;
}

export function planlessActions(guards: VineGuards, name?: string): PlanlessActions {
  return {
    deploy: fromProblem(planlessChangeProblem('DEPLOY', guards, name)),
    destroy: fromProblem(planlessChangeProblem('DESTROY', guards, name)),
  };
}
