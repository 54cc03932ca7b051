import type { UserActor } from '../domain/actors.js';
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors.js';
import type { DriftDetection, DriftResult, Job, JobTrigger, Vine, VineTriggers } from '../domain/records.js';
import { isUuid } from '../domain/validation.js';
import { transitionJob } from '../domain/jobStateMachine.js';
import type { VineSettingsPatch } from '../ports/VineStore.js';
import { type Stores, systemScope } from '../ports/UnitOfWork.js';
import { configHash, snapshotOfVine } from '../snapshot/configSnapshot.js';
import { Access } from './Access.js';
import { recordAudit } from './audit.js';
import { enqueueNotification } from './notificationOutbox.js';
import { autoDeployAfterPlan } from './gitJobs.js';
import { announce, type CoreDeps, isoNow } from './CoreDeps.js';
import { jobForPeople, type VineView, vineForPeople } from './views.js';
import { parseApprovalSetting } from './PlanReviewUseCases.js';

/** Drift checks run at most this often and at least this rarely (issue 14). */
export const DRIFT_INTERVAL_MIN_MINUTES = 60;
export const DRIFT_INTERVAL_MAX_MINUTES = 10080;
/** A vine runs after at most this many upstream vines. */
export const MAX_TRIGGERS_AFTER = 50;
/** Due checks one scheduler pass takes (the rest wait for the next pass). */
export const DRIFT_BATCH = 100;

export interface VineSettingsInput {
  drift_detection?: unknown;
  triggers?: unknown;
  /** The approval setting (issue 15): `{required, separate_approver?}` or null. */
  approval?: unknown;
}

/**
 * Drift detection and run triggers (issue 14). A drift check is a speculative PLAN job with
 * `trigger: {type:"drift"}`: it is queued only on a DEPLOYED, idle vine, leaves the vine's status
 * alone, is cancelled by any other job queued on the vine, and can never be deployed. Its result,
 * from the plan summary the agent reports, is the vine's `drift`.
 */
export class DriftUseCases {
  private readonly access: Access;

  constructor(private readonly deps: CoreDeps) {
    this.access = new Access(deps);
  }

  /** `PATCH /api/cli/configurations/{id}`: the drift schedule and the run triggers. */
  async configure(user: UserActor, nameOrId: unknown, input: VineSettingsInput): Promise<VineView> {
    const driftDetection = parseDriftDetection(input.drift_detection);
    const triggers = parseTriggers(input.triggers);
    const approval = parseApprovalSetting(input.approval);
    const { record, scope } = await this.access.locate(
      user,
      'vineyards.manage',
      'configuration_not_found',
      (stores, ownerId) => findVine(stores, ownerId, nameOrId),
    );
    return this.deps.uow.run(scope, async (stores) => {
      const vine = await stores.vines.get(record.owner_id, record.id);
      if (!vine) throw new NotFoundError('configuration');
      const patch: VineSettingsPatch = {};
      const now = this.deps.clock.now();
      if (driftDetection !== undefined) {
        patch.drift_detection = driftDetection;
        if (driftDetection === null) patch.next_drift_check_at = null;
        else if (
          vine.drift_detection?.interval_minutes !== driftDetection.interval_minutes ||
          vine.next_drift_check_at === null
        ) {
          patch.next_drift_check_at = minutesAfter(now, driftDetection.interval_minutes);
        }
      }
      if (triggers !== undefined) {
        await requireNoCycle(stores, vine, triggers);
        patch.triggers = triggers;
      }
      if (approval !== undefined) patch.approval = approval;
      const updated = await stores.vines.updateSettings(vine.owner_id, vine.id, patch, now.toISOString());
      await recordAudit(stores, this.deps, user, {
        action: 'vine.update',
        target: { type: 'vine', id: vine.id },
        owner_id: vine.owner_id,
        details: {
          ...(driftDetection !== undefined ? { drift_interval_minutes: driftDetection?.interval_minutes ?? null } : {}),
          ...(triggers !== undefined ? { triggers_after: triggers.after.join(',') } : {}),
          ...(approval !== undefined
            ? {
                approval_required: approval?.required ?? false,
                separate_approver: approval?.separate_approver ?? false,
              }
            : {}),
        },
      });
      const [cloudIdentity, components] = await Promise.all([
        updated.cloud_identity_id ? stores.cloudIdentities.get(updated.owner_id, updated.cloud_identity_id) : null,
        stores.vines.getComponents(updated.owner_id, updated.id),
      ]);
      return { ...vineForPeople(updated), cloud_identity: cloudIdentity, components };
    });
  }

  /** `POST /api/cli/configurations/{id}/drift-check`: one check now, on a DEPLOYED, idle vine. */
  async checkNow(user: UserActor, nameOrId: unknown): Promise<Job> {
    const { record, scope } = await this.access.locate(user, 'jobs.run', 'configuration_not_found', (stores, ownerId) =>
      findVine(stores, ownerId, nameOrId),
    );
    const job = await this.deps.uow.run(scope, async (stores) => {
      const vine = await stores.vines.get(record.owner_id, record.id);
      if (!vine) throw new NotFoundError('configuration');
      if (vine.status !== 'DEPLOYED') {
        throw new ConflictError(
          'configuration_not_deployed',
          `a drift check needs a DEPLOYED configuration (it is ${vine.status})`,
        );
      }
      if (await hasActiveJobs(stores, vine)) {
        throw new ConflictError(
          'configuration_busy',
          'the configuration has a queued or running job; check drift when it is idle',
        );
      }
      const queued = await queueDriftJob(stores, this.deps, vine);
      await recordAudit(stores, this.deps, user, {
        action: 'job.create',
        target: { type: 'job', id: queued.id },
        owner_id: queued.owner_id,
        details: { job_type: queued.job_type, vine_id: vine.id, trigger: 'drift' },
      });
      return queued;
    });
    await announce(this.deps.events, { type: 'job_queued', owner_id: job.owner_id, job_id: job.id });
    return jobForPeople(job);
  }

  /**
   * The scheduler's pass (every replica runs it): the checks due at `now` (the clock's, by
   * default) are taken under `FOR UPDATE SKIP LOCKED` and rescheduled in the same unit of work,
   * so two replicas never queue the same check, and a restart finds every check still due where
   * it left it. A vine that is not DEPLOYED or not idle when its check falls due skips that check
   * (a person's work on it comes first) and is checked again an interval later.
   */
  async queueDue(now: Date = this.deps.clock.now()): Promise<Job[]> {
    const at = now.toISOString();
    const queued = await this.deps.uow.run(systemScope, async (stores) => {
      const due = await stores.vines.takeDueDriftChecks(at, DRIFT_BATCH);
      const jobs: Job[] = [];
      for (const vine of due) {
        const interval = vine.drift_detection?.interval_minutes;
        await stores.vines.updateSettings(
          vine.owner_id,
          vine.id,
          { next_drift_check_at: interval === undefined ? null : minutesAfter(now, interval) },
          vine.updated_at,
        );
        if (interval === undefined || vine.status !== 'DEPLOYED' || (await hasActiveJobs(stores, vine))) continue;
        const job = await queueDriftJob(stores, this.deps, vine, at);
        await recordAudit(stores, this.deps, 'system', {
          action: 'job.create',
          target: { type: 'job', id: job.id },
          owner_id: job.owner_id,
          details: { job_type: job.job_type, vine_id: vine.id, trigger: 'drift' },
        });
        jobs.push(job);
      }
      return jobs;
    });
    for (const job of queued) {
      await announce(this.deps.events, { type: 'job_queued', owner_id: job.owner_id, job_id: job.id });
    }
    return queued;
  }
}

/**
 * What a job's end means for drift and run triggers, in the unit of work of its status change:
 * a finished drift check records its result on the vine; a successful DEPLOY queues a PLAN of
 * each downstream vine. Returns the jobs it queued (to announce after commit).
 */
export async function afterJobFinished(
  stores: Stores,
  deps: Pick<CoreDeps, 'random' | 'clock' | 'settings'>,
  job: Job,
  at: string,
): Promise<Job[]> {
  if (job.vine_id === null) return [];
  if (job.trigger.type === 'drift' && (job.status === 'SUCCESS' || job.status === 'FAILED')) {
    const drift = driftResultOf(job, at);
    const before = await stores.vines.get(job.owner_id, job.vine_id);
    await stores.vines.recordDrift(job.owner_id, job.vine_id, drift);
    // Announced when the vine starts to drift, not again at every check that finds it still drifted.
    if (drift.status === 'drifted' && before?.drift?.status !== 'drifted') {
      await enqueueNotification(stores, deps, {
        event: 'drift.detected',
        owner_id: job.owner_id,
        job_id: job.id,
        vine_id: job.vine_id,
        vineyard_id: job.vineyard_id,
      });
    }
    return [];
  }
  // A push's plan with changes, on a vine connected with auto_deploy, is deployed (issue 13).
  const deploy = await autoDeployAfterPlan(stores, deps, job, at);
  if (deploy) return [deploy];
  if (job.status !== 'SUCCESS' || job.job_type !== 'DEPLOY') return [];
  const queued: Job[] = [];
  for (const downstream of await stores.vines.listDownstream(job.owner_id, job.vine_id)) {
    await cancelQueuedDriftChecks(stores, downstream.owner_id, downstream.id, at);
    const planned = await createVineJob(
      stores,
      deps,
      downstream,
      { type: 'upstream', vine_id: job.vine_id, job_id: job.id },
      at,
    );
    await recordAudit(stores, deps, 'system', {
      action: 'job.create',
      target: { type: 'job', id: planned.id },
      owner_id: planned.owner_id,
      details: { job_type: planned.job_type, vine_id: downstream.id, trigger: 'upstream', upstream_job_id: job.id },
    });
    queued.push(planned);
  }
  return queued;
}

/** A drift check: a speculative plan, never deployed and never offered for a deploy. */
export function isDriftCheck(job: Pick<Job, 'trigger'>): boolean {
  return job.trigger.type === 'drift';
}

/** The result a finished drift check leaves on its vine. */
export function driftResultOf(job: Job, at: string): DriftResult {
  const base = { checked_at: job.finished_at ?? at, job_id: job.id };
  if (job.status !== 'SUCCESS') {
    return { ...base, status: 'unknown', changes: null, error: job.error_message ?? 'the drift check failed' };
  }
  const summary = job.execution_metadata.plan_summary;
  const counts =
    typeof summary === 'object' && summary !== null && !Array.isArray(summary)
      ? { add: summary.add, change: summary.change, destroy: summary.destroy }
      : null;
  if (
    counts === null ||
    !Object.values(counts).every((n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0)
  ) {
    return { ...base, status: 'unknown', changes: null, error: 'the agent reported no plan summary' };
  }
  const changes = counts as { add: number; change: number; destroy: number };
  const drifted = changes.add + changes.change + changes.destroy > 0;
  return { ...base, status: drifted ? 'drifted' : 'in_sync', changes };
}

/** A job queued by a person (or a trigger) on a vine cancels the vine's queued drift checks. */
export async function cancelQueuedDriftChecks(
  stores: Stores,
  ownerId: string,
  vineId: string,
  at: string,
): Promise<Job[]> {
  const queued = await stores.jobs.list(ownerId, { vine_id: vineId, status: 'QUEUED' });
  const cancelled: Job[] = [];
  for (const job of queued.filter((j) => j.trigger.type === 'drift')) {
    const updated = await stores.jobs.update(ownerId, job.id, job.status, {
      status: transitionJob(job.status, 'cancel'),
      finished_at: at,
      error_message: 'cancelled: a job was queued on the configuration after this drift check',
    });
    if (updated) cancelled.push(updated);
  }
  return cancelled;
}

async function queueDriftJob(stores: Stores, deps: Pick<CoreDeps, 'random' | 'clock'>, vine: Vine, at = isoNow(deps)) {
  return createVineJob(stores, deps, vine, { type: 'drift' }, at);
}

/** A PLAN job of the vine, snapshotted now, that any of the owner's agents may run. */
async function createVineJob(
  stores: Stores,
  deps: Pick<CoreDeps, 'random'>,
  vine: Vine,
  trigger: JobTrigger,
  at: string,
): Promise<Job> {
  const snapshot = snapshotOfVine(vine);
  return stores.jobs.create({
    id: deps.random.uuid(),
    owner_id: vine.owner_id,
    job_type: 'PLAN',
    status: 'QUEUED',
    config_snapshot: snapshot,
    config_hash: configHash(snapshot),
    vine_id: vine.id,
    vineyard_id: vine.vineyard_id,
    cloud_identity_id: vine.cloud_identity_id,
    assigned_worker_id: null,
    claimed_by_worker_id: null,
    plan_job_id: null,
    target_worker_id: null,
    execution_metadata: {},
    error_message: null,
    vine_status_before: null,
    trigger,
    created_by: null,
    approval: null,
    policy_override: null,
    created_at: at,
    claimed_at: null,
    finished_at: null,
  });
}

async function hasActiveJobs(stores: Stores, vine: Vine): Promise<boolean> {
  for (const status of ['QUEUED', 'PROCESSING'] as const) {
    if ((await stores.jobs.list(vine.owner_id, { vine_id: vine.id, status })).length > 0) return true;
  }
  return false;
}

async function findVine(stores: Stores, ownerId: string, nameOrId: unknown): Promise<Vine | null> {
  if (typeof nameOrId !== 'string' || nameOrId === '') return null;
  if (isUuid(nameOrId)) {
    const byId = await stores.vines.get(ownerId, nameOrId.toLowerCase());
    if (byId) return byId;
  }
  return stores.vines.findByName(ownerId, nameOrId);
}

/**
 * The vine runs after each of `triggers.after`; a cycle would make a deploy queue itself. Every
 * upstream must be a vine of the same owner, and none may (transitively) run after this vine.
 */
async function requireNoCycle(stores: Stores, vine: Vine, triggers: VineTriggers): Promise<void> {
  for (const [index, upstreamId] of triggers.after.entries()) {
    const upstream = await stores.vines.get(vine.owner_id, upstreamId);
    if (!upstream) {
      throw new ValidationError('triggers.after names a configuration that is not of the same owner', [
        { path: `triggers.after.${index}`, message: 'no configuration of the same owner has this id' },
      ]);
    }
  }
  const seen = new Set<string>();
  const pending = [...triggers.after];
  while (pending.length > 0) {
    const id = pending.pop() as string;
    if (id === vine.id) {
      throw new ConflictError(
        'trigger_cycle',
        'these run triggers would form a cycle: the configuration would run after itself',
      );
    }
    if (seen.has(id)) continue;
    seen.add(id);
    const upstream = await stores.vines.get(vine.owner_id, id);
    if (upstream) pending.push(...upstream.triggers.after);
  }
}

function parseDriftDetection(value: unknown): DriftDetection | null | undefined {
  if (value === undefined || value === null) return value;
  const interval =
    typeof value === 'object' && !Array.isArray(value)
      ? (value as { interval_minutes?: unknown }).interval_minutes
      : undefined;
  if (
    typeof interval !== 'number' ||
    !Number.isInteger(interval) ||
    interval < DRIFT_INTERVAL_MIN_MINUTES ||
    interval > DRIFT_INTERVAL_MAX_MINUTES
  ) {
    throw new ValidationError(
      `drift_detection.interval_minutes must be an integer from ${DRIFT_INTERVAL_MIN_MINUTES} to ${DRIFT_INTERVAL_MAX_MINUTES}`,
      [
        {
          path: 'drift_detection.interval_minutes',
          message: `an integer from ${DRIFT_INTERVAL_MIN_MINUTES} to ${DRIFT_INTERVAL_MAX_MINUTES}`,
        },
      ],
    );
  }
  return { interval_minutes: interval };
}

function parseTriggers(value: unknown): VineTriggers | undefined {
  if (value === undefined) return undefined;
  const after = typeof value === 'object' && value !== null ? (value as { after?: unknown }).after : undefined;
  if (!Array.isArray(after) || after.length > MAX_TRIGGERS_AFTER || !after.every((id) => isUuid(id))) {
    throw new ValidationError(`triggers.after must be a list of at most ${MAX_TRIGGERS_AFTER} configuration ids`, [
      { path: 'triggers.after', message: `a list of at most ${MAX_TRIGGERS_AFTER} configuration ids` },
    ]);
  }
  return { after: [...new Set(after.map((id: string) => id.toLowerCase()))] };
}

function minutesAfter(now: Date, minutes: number): string {
  return new Date(now.getTime() + minutes * 60_000).toISOString();
}
