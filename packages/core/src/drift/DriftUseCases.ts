import type { UserActor } from '../domain/actors.js';
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors.js';
import type { DriftDetection, Job, Vine, VineTriggers } from '../domain/records.js';
import { isUuid } from '../domain/validation.js';
import type { JobLifecycle } from '../jobs/JobLifecycle.js';
import type { VineSettingsPatch } from '../ports/VineStore.js';
import { type Stores, systemScope } from '../ports/UnitOfWork.js';
import { Access } from '../usecases/Access.js';
import { recordAudit } from '../usecases/audit.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';
import { type JobView, jobForPeople, type VineView, vineForPeople } from '../usecases/views.js';
import { parseApprovalSetting } from '../policies/PlanReviewUseCases.js';

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

  constructor(
    private readonly deps: CoreDeps,
    private readonly lifecycle: JobLifecycle,
  ) {
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
  async checkNow(user: UserActor, nameOrId: unknown): Promise<JobView> {
    const { record, scope } = await this.access.locate(user, 'jobs.run', 'configuration_not_found', (stores, ownerId) =>
      findVine(stores, ownerId, nameOrId),
    );
    const job = await this.lifecycle.run(scope, async (stores) => {
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
      return this.queueCheck(stores, vine, user);
    });
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
    return this.lifecycle.run(systemScope, async (stores) => {
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
        jobs.push(await this.queueCheck(stores, vine, 'system', at));
      }
      return jobs;
    });
  }

  /** A drift check: a PLAN of the vine as it is, that any of the owner's agents may run. */
  private queueCheck(stores: Stores, vine: Vine, actor: UserActor | 'system', at?: string): Promise<Job> {
    return this.lifecycle.queue(stores, {
      owner_id: vine.owner_id,
      job_type: 'PLAN',
      vine,
      trigger: { type: 'drift' },
      actor,
      created_by: null,
      audit: { trigger: 'drift' },
      ...(at === undefined ? {} : { at }),
    });
  }
}

/** A drift check: a speculative plan, never deployed and never offered for a deploy. */
export function isDriftCheck(job: Pick<Job, 'trigger'>): boolean {
  return job.trigger.type === 'drift';
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
export async function requireNoCycle(
  stores: Stores,
  vine: Pick<Vine, 'id' | 'owner_id'>,
  triggers: VineTriggers,
): Promise<void> {
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

/** `{after: [configuration ids]}` (at most `MAX_TRIGGERS_AFTER`, no repeats); undefined: unchanged. */
export function parseTriggers(value: unknown): VineTriggers | undefined {
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
