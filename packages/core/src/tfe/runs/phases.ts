import type { UserActor } from '../../domain/actors.js';
import { NotFoundError } from '../../domain/errors.js';
import { planChanges, type PlanSummary } from '../../domain/jobResults.js';
import { isSpeculativeTrigger, type Job } from '../../domain/records.js';
import type { OrgAction } from '../../domain/roles.js';
import { planJobIdOf, runApplyId, runPlanId } from './records.js';
import type { Stores } from '../../ports/UnitOfWork.js';
import { Access } from '../../usecases/Access.js';
import type { CoreDeps } from '../../usecases/CoreDeps.js';

/**
 * The phases of a run of the Terraform Cloud protocol (issue 27). A run IS its PLAN job: the run
 * is `run-<plan job id>`, its plan `plan-<id>`, its policy check `polchk-<id>`, and its apply
 * `apply-<id>`, which is the newest DEPLOY or DESTROY of that plan (none yet: the apply is
 * `pending`, or `unreachable` once the plan can no longer be applied). Everything here works from
 * those ids alone.
 */
export type PhaseKind = 'plan' | 'apply';

/** TFE's statuses of a plan or an apply (go-tfe's `PlanStatus`, `ApplyStatus`). */
export type PhaseStatus = 'pending' | 'queued' | 'running' | 'finished' | 'errored' | 'canceled' | 'unreachable';

/** A job's status as a phase's: queued, running, finished, errored or canceled. */
export function phaseStatusOfJob(job: Pick<Job, 'status'>): PhaseStatus {
  switch (job.status) {
    case 'QUEUED':
      return 'queued';
    case 'PROCESSING':
      return 'running';
    case 'SUCCESS':
      return 'finished';
    case 'FAILED':
      return 'errored';
    case 'CANCELLED':
      return 'canceled';
  }
}

/** Whether a phase's status is final: its log is complete (ETX) and the CLI stops reading. */
export function phaseIsOver(status: PhaseStatus): boolean {
  return status === 'finished' || status === 'errored' || status === 'canceled' || status === 'unreachable';
}

/**
 * The apply phase of a plan: the status of its newest DEPLOY/DESTROY, or without one `pending`
 * while the plan may still be applied (it is queued or running, or it succeeded) and
 * `unreachable` once it never will be: it failed or was cancelled, it is speculative (never
 * applied), or it was rejected (discarded).
 */
export function applyStatusOf(
  plan: Pick<Job, 'status' | 'trigger' | 'approval'>,
  change: Pick<Job, 'status'> | null,
): PhaseStatus {
  if (change) return phaseStatusOfJob(change);
  if (plan.status === 'FAILED' || plan.status === 'CANCELLED') return 'unreachable';
  if (isSpeculativeTrigger(plan.trigger) || plan.approval?.decision === 'rejected') return 'unreachable';
  return 'pending';
}

/** `status-timestamps` of a phase run by `job` (only the times that happened; go-tfe parses each as RFC 3339). */
export function statusTimestamps(job: Pick<Job, 'status' | 'created_at' | 'claimed_at' | 'finished_at'>) {
  const times: Record<string, string> = { 'queued-at': job.created_at };
  if (job.claimed_at) times['started-at'] = job.claimed_at;
  if (job.finished_at) {
    const key = job.status === 'SUCCESS' ? 'finished-at' : job.status === 'FAILED' ? 'errored-at' : 'canceled-at';
    times[key] = job.finished_at;
  }
  return times;
}

/** The counts of a phase: of the plan's typed summary (what the plan adds, changes, destroys). */
export function resourceCounts(summary: PlanSummary | undefined): {
  additions: number;
  changes: number;
  destructions: number;
} {
  return { additions: summary?.add ?? 0, changes: summary?.change ?? 0, destructions: summary?.destroy ?? 0 };
}

/** What `GET /plans/:id` and `GET /applies/:id` answer, before the log URL is added. */
export interface PhaseView {
  kind: PhaseKind;
  /** `plan-<id>` or `apply-<id>`. */
  id: string;
  planJobId: string;
  ownerId: string;
  /** The job whose log the phase shows; null: an apply not queued yet. */
  jobId: string | null;
  status: PhaseStatus;
  hasChanges: boolean;
  additions: number;
  changes: number;
  destructions: number;
  statusTimestamps: Record<string, string>;
}

/** The plan phase of a PLAN job. */
export function planPhase(plan: Job): PhaseView {
  const summary = plan.execution_metadata.plan_summary;
  const counts = resourceCounts(summary);
  return {
    kind: 'plan',
    id: runPlanId(plan.id),
    planJobId: plan.id,
    ownerId: plan.owner_id,
    jobId: plan.id,
    status: phaseStatusOfJob(plan),
    hasChanges: summary !== undefined && planChanges(summary) > 0,
    ...counts,
    statusTimestamps: statusTimestamps(plan),
  };
}

/** The apply phase of a PLAN job and its newest change; the counts are those of the applied plan. */
export function applyPhase(plan: Job, change: Job | null): PhaseView {
  const counts = resourceCounts(change ? plan.execution_metadata.plan_summary : undefined);
  return {
    kind: 'apply',
    id: runApplyId(plan.id),
    planJobId: plan.id,
    ownerId: plan.owner_id,
    jobId: change?.id ?? null,
    status: applyStatusOf(plan, change),
    hasChanges: counts.additions + counts.changes + counts.destructions > 0,
    ...counts,
    statusTimestamps: change ? statusTimestamps(change) : {},
  };
}

/** The phase of a plan job read in `stores` (the apply resolves its newest change). */
export async function phaseOf(stores: Stores, plan: Job, kind: PhaseKind): Promise<PhaseView> {
  if (kind === 'plan') return planPhase(plan);
  return applyPhase(plan, await stores.jobs.latestChangeOfPlan(plan.owner_id, plan.id));
}

/** Whether a job is a run's plan: a PLAN of a vine. */
export function isRunPlan(job: Job | null): job is Job {
  return job !== null && job.job_type === 'PLAN' && job.vine_id !== null;
}

/**
 * `GET /plans/:id` and `GET /applies/:id`: the phase of a plan job the person may read (a run of
 * another owner, or an id that is not one, is `404`).
 */
export class TfePhaseUseCases {
  private readonly access: Access;

  constructor(deps: Pick<CoreDeps, 'uow'>) {
    this.access = new Access(deps);
  }

  async read(actor: UserActor, id: unknown, kind: PhaseKind): Promise<PhaseView> {
    const planJobId = planJobIdOf(id, kind);
    if (planJobId === null) throw new NotFoundError('job');
    return this.access.readLocated(
      actor,
      'read',
      'job_not_found',
      async (stores, ownerId) => {
        const job = await stores.jobs.get(ownerId, planJobId);
        return isRunPlan(job) ? job : null;
      },
      (stores, plan) => phaseOf(stores, plan, kind),
    );
  }

  /** The plan job of a run (`run-<id>`) the person may read: `404` when there is none. */
  async readRun(actor: UserActor, runId: unknown): Promise<Job> {
    return (await this.locatePlan(actor, planJobIdOf(runId, 'run'))).record;
  }

  /** The plan job of a run the person may `action` (reading by default), and the scope to act on it in. */
  async locatePlan(actor: UserActor, planJobId: string | null, action: OrgAction = 'read') {
    if (planJobId === null) throw new NotFoundError('job');
    return this.access.locate(actor, action, 'job_not_found', async (stores, ownerId) => {
      const job = await stores.jobs.get(ownerId, planJobId);
      return isRunPlan(job) ? job : null;
    });
  }
}
