import type { UserActor } from '../domain/actors.js';
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors.js';
import type { ApprovalSetting, PlanApproval, PolicyOverride } from '../domain/policies.js';
import { approverProblem, failedMandatory, planIsCurrent } from '../jobs/deployGate.js';
import { planChanges } from '../domain/jobResults.js';
import { isSpeculativeTrigger, type Job, type Vine } from '../domain/records.js';
import type { OrgAction } from '../domain/roles.js';
import { requireUuid } from '../domain/validation.js';
import type { Stores } from '../ports/UnitOfWork.js';
import { Access } from '../usecases/Access.js';
import { recordAudit } from '../usecases/audit.js';
import type { JobHook } from '../jobs/hooks.js';
import type { JobLifecycle } from '../jobs/JobLifecycle.js';
import { type CoreDeps, isoNow } from '../usecases/CoreDeps.js';
import { autoDeployAfterPlan } from '../vcs/gitJobs.js';
import { continueRun } from '../tfe/runs/runApply.js';
import { enqueueNotification, type OutboxDeps } from '../usecases/notificationOutbox.js';
import { jobForPeople, type JobView } from '../usecases/views.js';

/** Comments and reasons are kept on the plan job and in the audit log: a paragraph, not a file. */
export const MAX_REVIEW_TEXT = 2000;

export interface ApproveInput {
  comment?: unknown;
}
export interface RejectInput {
  comment?: unknown;
}
export interface OverrideInput {
  reason?: unknown;
}

/**
 * Approvals, rejections and overrides of plans (issue 15). Each is recorded once on the plan job
 * (who, when, comment or reason), conditionally, so of two people deciding at once one wins, and
 * audited in the same unit of work. The gate that reads them is the deploy gate
 * (`jobs/deployGate.ts`), run when a DEPLOY (or DESTROY) of the plan is queued.
 *
 * A plan is decided once: approved or rejected. A rejection ends the plan's path to deploy (plan
 * again); an approval is not taken back (a rejection after it is refused `plan_already_decided`),
 * but it is of that plan only: a change of the configuration makes the plan stale, and the next
 * plan needs its own approval.
 */
export class PlanReviewUseCases {
  private readonly access: Access;

  constructor(
    private readonly deps: CoreDeps,
    private readonly lifecycle: JobLifecycle,
  ) {
    this.access = new Access(deps);
  }

  /**
   * `POST /api/cli/jobs/{id}/approve`: operators and above in an organization. A plan that is
   * stale (the configuration changed since) cannot be approved; with `separate_approver` the
   * person who queued it cannot either.
   */
  async approve(user: UserActor, id: unknown, input: ApproveInput = {}): Promise<JobView> {
    const comment = optionalText(input.comment, 'comment');
    return this.decide(user, id, 'approved', comment);
  }

  /** `POST /api/cli/jobs/{id}/reject`: a comment says why; the plan can never be deployed. */
  async reject(user: UserActor, id: unknown, input: RejectInput = {}): Promise<JobView> {
    const comment = requiredText(input.comment, 'comment');
    return this.decide(user, id, 'rejected', comment);
  }

  /**
   * `POST /api/cli/jobs/{id}/override`: admins and owners in an organization (the owner of a
   * personal account). Only a plan with failed mandatory policies has anything to override.
   */
  async override(user: UserActor, id: unknown, input: OverrideInput = {}): Promise<JobView> {
    const reason = requiredText(input.reason, 'reason');
    const { plan, scope } = await this.locatePlan(user, id, 'plans.override');
    return this.lifecycle.run(scope, async (stores) => {
      const current = await requireDeployablePlan(stores, plan.owner_id, plan.id);
      const failed = failedMandatory(current);
      if (failed.length === 0) {
        throw new ConflictError(
          'no_failed_policies',
          'the plan failed no mandatory policy: there is nothing to override',
        );
      }
      const override: PolicyOverride = { ...decidedBy(this.deps, user), reason };
      const updated = await stores.jobs.setPolicyOverride(current.owner_id, current.id, override);
      if (!updated) {
        throw new ConflictError('plan_already_overridden', "the plan's failed policies were already overridden");
      }
      await recordAudit(stores, this.deps, user, {
        action: 'plan.override',
        target: { type: 'job', id: current.id },
        owner_id: current.owner_id,
        details: { vine_id: current.vine_id, reason, policies: failed.map((policy) => policy.name).join(', ') },
      });
      // A remote run told to apply goes on once its failed policies are overridden (issue 27).
      await continueRun(stores, this.deps, this.lifecycle, updated);
      return jobForPeople(updated);
    });
  }

  private async decide(
    user: UserActor,
    id: unknown,
    decision: PlanApproval['decision'],
    comment: string | null,
  ): Promise<JobView> {
    const { plan, scope } = await this.locatePlan(user, id, 'plans.approve');
    return this.lifecycle.run(scope, async (stores) => {
      const current = await requireDeployablePlan(stores, plan.owner_id, plan.id);
      if (current.approval !== null) throw alreadyDecided(current.approval);
      const vine = await stores.vines.get(current.owner_id, current.vine_id as string);
      if (!vine) throw new NotFoundError('configuration');
      if (decision === 'approved') {
        if (!planIsCurrent(current, vine)) {
          throw new ConflictError(
            'plan_stale',
            'the configuration changed since this plan was made; plan again and approve that plan',
          );
        }
        // Of a plan the system queued, the person who caused it counts as its creator (issue 23).
        const problem = approverProblem(current, vine.approval, user);
        if (problem !== null) throw problem;
      }
      const approval: PlanApproval = { ...decidedBy(this.deps, user), decision, comment };
      const updated = await stores.jobs.setApproval(current.owner_id, current.id, approval);
      if (!updated) {
        const now = await stores.jobs.get(current.owner_id, current.id);
        throw alreadyDecided(now?.approval ?? approval);
      }
      await recordAudit(stores, this.deps, user, {
        action: decision === 'approved' ? 'plan.approve' : 'plan.reject',
        target: { type: 'job', id: current.id },
        owner_id: current.owner_id,
        details: { vine_id: current.vine_id, comment },
      });
      // Git-driven auto_deploy (issue 13) waits for the approval of a push's plan: here it goes on.
      if (decision === 'approved') await autoDeployAfterPlan(stores, this.lifecycle, updated, { approved: true });
      // A remote run told to apply (`-auto-approve`, or a yes while it waited) goes on (issue 27).
      if (decision === 'approved') await continueRun(stores, this.deps, this.lifecycle, updated, vine);
      return jobForPeople(updated);
    });
  }

  private async locatePlan(user: UserActor, id: unknown, action: OrgAction) {
    const jobId = requireUuid(id, 'id');
    const { record, scope } = await this.access.locate(user, action, 'job_not_found', (stores, ownerId) =>
      stores.jobs.get(ownerId, jobId),
    );
    return { plan: record, scope };
  }
}

/** The plan as it is now, if it is a plan that could still be deployed: a successful PLAN, not applied. */
async function requireDeployablePlan(stores: Stores, ownerId: string, id: string): Promise<Job> {
  // Locked: a DEPLOY of the plan queued meanwhile is waited for, and seen below.
  const plan = await stores.jobs.getForUpdate(ownerId, id);
  if (!plan) throw new NotFoundError('job');
  if (plan.job_type !== 'PLAN' || plan.vine_id === null) {
    throw new ConflictError('not_a_plan_job', 'only a PLAN job can be approved, rejected or overridden');
  }
  if (isSpeculativeTrigger(plan.trigger)) {
    throw new ConflictError(
      'plan_speculative',
      "this plan is speculative (a drift check or a pull request's plan), which is never deployed",
    );
  }
  if (plan.status !== 'SUCCESS') {
    throw new ConflictError('plan_not_ready', `the plan has not succeeded (it is ${plan.status})`);
  }
  if ((await stores.jobs.listDeploysOfPlan(ownerId, plan.id)).length > 0) {
    throw new ConflictError('plan_already_applied', 'this plan is already applied or being applied');
  }
  return plan;
}

function alreadyDecided(approval: PlanApproval): ConflictError {
  return new ConflictError(
    'plan_already_decided',
    `the plan was already ${approval.decision} by ${approval.email ?? approval.user_id} at ${approval.at}`,
  );
}

function decidedBy(deps: Pick<CoreDeps, 'clock'>, user: UserActor) {
  return { user_id: user.userId, email: user.email || null, at: isoNow(deps) };
}

function optionalText(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') {
    throw new ValidationError(`${field} must be a string`, [{ path: field, message: 'must be a string' }]);
  }
  const text = value.trim();
  if (text.length > MAX_REVIEW_TEXT) {
    throw new ValidationError(`${field} must be at most ${MAX_REVIEW_TEXT} characters`, [
      { path: field, message: `at most ${MAX_REVIEW_TEXT} characters` },
    ]);
  }
  return text === '' ? null : text;
}

function requiredText(value: unknown, field: string): string {
  const text = optionalText(value, field);
  if (text === null) {
    throw new ValidationError(`${field} is required`, [{ path: field, message: 'required' }]);
  }
  return text;
}

/**
 * `plan.needs_approval`, in the unit of work of the plan's success: a PLAN (not speculative) of
 * a vine that requires approval, that found changes (or reported no summary, which may hide some).
 */
export async function enqueuePlanNeedsApproval(
  stores: Stores,
  deps: OutboxDeps,
  job: Job,
  known?: Vine,
): Promise<void> {
  if (
    job.job_type !== 'PLAN' ||
    job.status !== 'SUCCESS' ||
    isSpeculativeTrigger(job.trigger) ||
    job.vine_id === null
  ) {
    return;
  }
  const vine = known?.id === job.vine_id ? known : await stores.vines.get(job.owner_id, job.vine_id);
  if (!vine?.approval?.required || !hasChanges(job)) return;
  // A remote run's plan-only plan (`tofu plan`, issue 27) is never applied: nothing to approve.
  if (job.trigger.type === 'cli' && (await stores.tfeRuns.get(job.owner_id, job.id))?.plan_only) return;
  await enqueueNotification(stores, deps, {
    event: 'plan.needs_approval',
    owner_id: job.owner_id,
    job_id: job.id,
    vine_id: job.vine_id,
    vineyard_id: job.vineyard_id,
  });
}

/** `plan.needs_approval` when a plan that needs one succeeds. */
export const planReviewHooks: readonly JobHook[] = [
  {
    name: 'approvals.planNeedsApproval',
    on: ['reported'],
    run: (job, change, { stores, deps }) => enqueuePlanNeedsApproval(stores, deps, job, change.vine),
  },
];

/** A plan without a summary may hide changes: it needs a look as much as one with some. */
function hasChanges(job: Job): boolean {
  const summary = job.execution_metadata.plan_summary;
  return summary === undefined || planChanges(summary) > 0;
}

/**
 * A vine's approval setting as a body gives it (`approval` at create or in the PATCH):
 * `{required, separate_approver?}`, or null to need none. `{required: false}` is none (null).
 * Undefined when the body leaves it out.
 */
export function parseApprovalSetting(value: unknown): ApprovalSetting | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  const record = typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  if (record === null || typeof record.required !== 'boolean') {
    throw new ValidationError('approval must be {required: boolean, separate_approver?: boolean} or null', [
      { path: 'approval.required', message: 'must be a boolean' },
    ]);
  }
  const separate = record.separate_approver;
  if (separate !== undefined && separate !== null && typeof separate !== 'boolean') {
    throw new ValidationError('approval.separate_approver must be a boolean', [
      { path: 'approval.separate_approver', message: 'must be a boolean' },
    ]);
  }
  if (!record.required) return null;
  return { required: true, separate_approver: separate === true };
}
