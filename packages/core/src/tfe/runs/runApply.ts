import type { UserActor } from '../../domain/actors.js';
import { ConflictError, isDomainError, NotFoundError } from '../../domain/errors.js';
import type { Job, Vine } from '../../domain/records.js';
import { snapshotOfPlanNow } from '../../jobs/changeSnapshot.js';
import { checkChange } from '../../jobs/deployGate.js';
import type { JobHook } from '../../jobs/hooks.js';
import type { JobLifecycle } from '../../jobs/JobLifecycle.js';
import type { Stores } from '../../ports/UnitOfWork.js';
import { configHash } from '../../snapshot/configSnapshot.js';
import { recordAudit } from '../../usecases/audit.js';
import { type CoreDeps, isoNow } from '../../usecases/CoreDeps.js';
import { runId, type TfeRun } from './records.js';
import { runHasChanges } from './runStatus.js';

/**
 * What `apply` did: queued the DEPLOY (or DESTROY), recorded the yes until the plan's approval,
 * or (the system's apply only) left the run waiting where the gate refuses.
 */
export type ApplyOutcome = { queued: Job } | { waitingForApproval: true } | { refused: string };

/** Why a run's plan may never be applied, whoever asks; null: the gate decides. */
export function closedRunProblem(run: TfeRun): ConflictError | null {
  if (run.discarded_at !== null) return new ConflictError('run_discarded', 'this run was discarded: start a new run');
  if (run.plan_only) {
    return new ConflictError(
      'run_plan_only',
      'this run is a speculative plan (tofu plan), which is never applied: run tofu apply',
    );
  }
  return null;
}

/**
 * Queues the DEPLOY (a DESTROY for a destroy run) of the run's plan through the deploy gate of
 * `trellis deploy --plan` (approvals, policies, stale-plan guard), in the caller's unit of work.
 * A person's yes on a plan that lacks only the vine's approval is recorded (`confirmed`) and the
 * apply is queued when the plan is approved (`continueRun`). `known.plan`: the run's plan as the
 * caller's unit of work holds it after writing it (the plan that just ended, or was just decided):
 * its row is locked already, and it is not read again; `known.vine`: its vine as the caller holds
 * it, likewise.
 */
export async function applyRun(
  stores: Stores,
  deps: CoreDeps,
  lifecycle: JobLifecycle,
  run: TfeRun,
  actor: UserActor | 'system',
  known?: { plan: Job; vine?: Vine },
): Promise<ApplyOutcome> {
  const closed = closedRunProblem(run);
  if (closed !== null) throw closed;
  const plan = known?.plan.id === run.plan_job_id ? known.plan : await stores.jobs.get(run.owner_id, run.plan_job_id);
  const vine = known?.vine?.id === run.vine_id ? known.vine : await stores.vines.get(run.owner_id, run.vine_id);
  if (!plan || !vine) throw new NotFoundError('run');
  if (plan.status === 'SUCCESS' && !runHasChanges(plan)) {
    throw new ConflictError('run_has_no_changes', 'the plan found no changes: there is nothing to apply');
  }
  const type = run.is_destroy ? 'DESTROY' : 'DEPLOY';
  const snapshot = snapshotOfPlanNow(vine, plan);
  const hash = configHash(snapshot);
  try {
    await checkChange(stores, { type, vine, planJobId: plan.id, hash, lockedPlan: known?.plan });
  } catch (error) {
    // The system's apply (`continueRun`) leaves a run the gate refuses waiting; the gate only reads.
    if (actor === 'system' && isDomainError(error)) return { refused: error.code };
    if (!(isDomainError(error) && error.code === 'approval_required' && actor !== 'system')) throw error;
    if (!(await stores.tfeRuns.confirm(run.owner_id, run.plan_job_id, isoNow(deps), actor.userId))) {
      throw new ConflictError('run_already_confirmed', 'this run was already confirmed; it waits for its approval');
    }
    await recordAudit(stores, deps, actor, {
      action: 'run.confirm',
      target: { type: 'job', id: plan.id },
      owner_id: run.owner_id,
      details: { vine_id: vine.id, run_id: runId(plan.id), waiting_for: 'approval' },
    });
    return { waitingForApproval: true };
  }
  const queued = await lifecycle.queue(stores, {
    owner_id: run.owner_id,
    job_type: type,
    vine,
    configuration: { snapshot, hash },
    plan_job_id: plan.id,
    plan,
    trigger: { type: 'cli' },
    actor,
    created_by: actor === 'system' ? run.created_by : actor.userId,
    caused_by: actor === 'system' ? run.created_by : null,
    audit: { plan_job_id: plan.id, run_id: runId(plan.id), ...(actor === 'system' ? { auto_apply: true } : {}) },
  });
  await stores.tfeRuns.setApply(run.owner_id, run.plan_job_id, queued.id);
  return { queued };
}

/**
 * A run that was told to apply (`auto-apply`, the CLI's `-auto-approve`, or a person's yes while
 * the plan waited for its approval) is applied as soon as its plan may be: when the plan ends
 * successfully with changes, when it is approved, when its failed policies are overridden. A gate
 * that still refuses leaves it waiting (or for a person to discard). Returns the DEPLOY, or null.
 * `plan`: as the caller's unit of work holds it after writing it (ended, decided, overridden);
 * `vine`: its vine, when the caller holds it too.
 */
export async function continueRun(
  stores: Stores,
  deps: CoreDeps,
  lifecycle: JobLifecycle,
  plan: Job,
  vine?: Vine,
): Promise<Job | null> {
  if (plan.job_type !== 'PLAN' || plan.trigger.type !== 'cli' || plan.status !== 'SUCCESS') return null;
  const run = await stores.tfeRuns.get(plan.owner_id, plan.id);
  if (!run || closedRunProblem(run) !== null || !(run.auto_apply || run.confirmed_at !== null)) return null;
  if (!runHasChanges(plan) || plan.execution_metadata.plan_summary === undefined) return null;
  // A plan already applied, or being applied, is the gate's `plan_already_applied`: refused, null.
  const outcome = await applyRun(stores, deps, lifecycle, run, 'system', { plan, vine });
  return 'queued' in outcome ? outcome.queued : null;
}

/** `-auto-approve` (issue 27): a remote run's plan with changes is applied once it ends, gate permitting. */
export const tfeRunHooks: readonly JobHook[] = [
  {
    name: 'tfe.autoApply',
    on: ['reported'],
    async run(job, change, { stores, deps, lifecycle }) {
      await continueRun(stores, deps, lifecycle, job, change.vine);
    },
  },
];
