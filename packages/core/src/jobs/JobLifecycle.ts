import type { AuditDetails } from '../domain/audit.js';
import type { JobType } from '../domain/enums.js';
import { ConflictError, TooLargeError } from '../domain/errors.js';
import { isTerminalJobStatus, type JobEvent, transitionJob } from '../domain/jobStateMachine.js';
import type { ExecutionMetadata } from '../domain/jobResults.js';
import { type ConfigSnapshot, isSpeculativeTrigger, type Job, type JobTrigger, type Vine } from '../domain/records.js';
import { transitionVine, type VineJobType } from '../domain/vineStateMachine.js';
import type { JobPatch } from '../ports/JobStore.js';
import type { Scope, Stores } from '../ports/UnitOfWork.js';
import { configHash, snapshotOfVine, snapshotOfVineAt } from '../snapshot/configSnapshot.js';
import { type AuditBy, recordAudit } from '../usecases/audit.js';
import { type CoreDeps, isoNow } from '../usecases/CoreDeps.js';
import { deriveWorkerStatus } from '../domain/workerStatus.js';
import { deployOfferOf } from './deployOffer.js';
import { type EndReason, type EndReasonRule, endReasonRule } from './endReasons.js';
import type { JobChange, JobHook, JobHookContext, JobMoment } from './hooks.js';

/** What to queue: the one description of a new job, whoever queues it. */
export interface QueueSpec {
  owner_id: string;
  job_type: JobType;
  /** The job's vine; null for a DESTROY_WORKER (then `configuration` is required). */
  vine: Vine | null;
  /**
   * The configuration the job runs, when the caller made it already (a DEPLOY of a plan checks
   * its hash first; a DESTROY_WORKER's is its target's). Otherwise the vine's as it is now, at
   * `commit` when one is given.
   */
  configuration?: { snapshot: ConfigSnapshot; hash: string };
  /** A git-driven job's commit (ignored when `configuration` is given). */
  commit?: string | null;
  trigger: JobTrigger;
  assigned_worker_id?: string | null;
  plan_job_id?: string | null;
  /**
   * The plan of `plan_job_id` as the caller's unit of work already holds it (it just ended, was
   * just decided, or was read locked for its DEPLOY), so queueing its apply does not read it again.
   */
  plan?: Job;
  target_worker_id?: string | null;
  /** Who queued it, for the audit log: a person, or the system. */
  actor: Exclude<AuditBy, { workerId: string }>;
  /** `created_by`: by default the person who queued it (null for the system). */
  created_by?: string | null;
  /** `caused_by`: of a job the system queues, the person whose action caused it (default none). */
  caused_by?: string | null;
  /** Facts the `job.create` audit entry adds to `job_type` and `vine_id`. */
  audit?: AuditDetails;
  /** The time it is queued at (default: the clock's now). */
  at?: string;
}

export interface EndOptions {
  reason: EndReason;
  /** Who ended it, for the audit log: the person, the agent that reported, or the system. */
  actor: AuditBy;
  /** The job's `error_message` (default: the reason's for the event). */
  message?: string | null;
  /** What the report adds to the job's `execution_metadata` (merged, within its cap). */
  metadata?: ExecutionMetadata;
}

type AfterCommit = () => Promise<void> | void;

/**
 * The job lifecycle's one owner (issue 24): `queue` is the only way a job starts and `end` the
 * only way it ends (with `progress`, a running job's metadata-only report). Each runs the job
 * state machine, the vine's move and the audit entry itself, then the hooks registered for the
 * moment (`jobHooks`), all in the caller's unit of work, which must be opened by `run` so that
 * what the hooks defer (live announcements) happens after it commits.
 */
export class JobLifecycle {
  private readonly units = new WeakMap<Stores, AfterCommit[]>();

  constructor(
    private readonly deps: CoreDeps,
    private readonly hooks: readonly JobHook[],
  ) {}

  /** One unit of work in which jobs may be queued and ended; deferred effects run after it commits. */
  async run<T>(scope: Scope, work: (stores: Stores) => Promise<T>): Promise<T> {
    const deferred: AfterCommit[] = [];
    const result = await this.deps.uow.run(scope, async (stores) => {
      this.units.set(stores, deferred);
      return work(stores);
    });
    for (const effect of deferred) {
      try {
        await effect();
      } catch {
        // Deliberately ignored: the change is committed; announcements are best effort.
      }
    }
    return result;
  }

  /** Queues a job: its snapshot and hash, the queued drift checks of its vine giving way, audit, hooks. */
  async queue(stores: Stores, spec: QueueSpec): Promise<Job> {
    const deferred = this.unitOf(stores);
    const at = spec.at ?? isoNow(this.deps);
    const vine = spec.vine;
    // A drift check never waits ahead of other work on its vine: queued ones give way.
    if (vine !== null && spec.trigger.type !== 'drift') await this.giveWay(stores, vine);
    const configuration = spec.configuration ?? configurationOf(vine, spec.commit ?? null);
    const assigned = spec.assigned_worker_id ?? null;
    const target = spec.target_worker_id ?? null;
    // A DEPLOY of a plan is held a moment for the plan's agent, whose workspace is warm (issue 31).
    const offer = await deployOfferOf(
      stores,
      {
        owner_id: spec.owner_id,
        job_type: spec.job_type,
        plan_job_id: spec.plan_job_id ?? null,
        assigned_worker_id: assigned,
        target_worker_id: target,
        plan: spec.plan,
      },
      this.deps.clock.now(),
      this.deps.settings.heartbeatTimeoutSeconds,
    );
    const job = await stores.jobs.create(
      {
        id: this.deps.random.uuid(),
        owner_id: spec.owner_id,
        job_type: spec.job_type,
        status: 'QUEUED',
        config_snapshot: configuration.snapshot,
        config_hash: configuration.hash,
        vine_id: vine?.id ?? null,
        vineyard_id: vine?.vineyard_id ?? null,
        cloud_identity_id: vine?.cloud_identity_id ?? null,
        assigned_worker_id: assigned,
        claimed_by_worker_id: null,
        plan_job_id: spec.plan_job_id ?? null,
        target_worker_id: target,
        execution_metadata: {},
        error_message: null,
        vine_status_before: null,
        trigger: spec.trigger,
        created_by:
          spec.created_by !== undefined ? spec.created_by : spec.actor === 'system' ? null : spec.actor.userId,
        caused_by: spec.caused_by ?? null,
        claimed_policies: null,
        approval: null,
        policy_override: null,
        created_at: at,
        claimed_at: null,
        finished_at: null,
      },
      offer,
    );
    await recordAudit(stores, this.deps, spec.actor, {
      action: 'job.create',
      target: { type: 'job', id: job.id },
      owner_id: job.owner_id,
      details: { job_type: job.job_type, vine_id: job.vine_id, ...spec.audit },
    });
    await this.runHooks(stores, deferred, job, { moment: 'queued', from: null, at });
    return job;
  }

  /**
   * Ends a job by `event` for `reason`: the state machine's move (409 `invalid_transition` when
   * it has none), the vine's move for a job that ran, the state lock the reason releases, the
   * audit entry, then the hooks. Null when the job changed meanwhile (another unit of work ended
   * it first): nothing was done.
   */
  async end(stores: Stores, job: Job, event: JobEvent, options: EndOptions): Promise<Job | null> {
    const deferred = this.unitOf(stores);
    const rule = endReasonRule(options.reason);
    if (!rule.events.includes(event)) {
      throw new Error(`a job does not end by ${event} for the reason ${options.reason}`);
    }
    const status = transitionJob(job.status, event);
    if (!isTerminalJobStatus(status)) throw new Error(`${event} does not end a ${job.status} job`);
    const at = isoNow(this.deps);
    const message = options.message ?? rule.messages[event] ?? null;
    const patch: JobPatch = { status, finished_at: at, ...(status === 'SUCCESS' ? {} : { error_message: message }) };
    if (options.metadata !== undefined) patch.execution_metadata = this.merged(job, options.metadata);
    const ended = await stores.jobs.update(job.owner_id, job.id, job.status, patch);
    if (!ended) return null;
    let vine: Vine | null = null;
    if (job.status === 'PROCESSING') {
      vine = await moveVine(stores, ended, at);
      if (await this.releasesStateLock(stores, ended, rule)) await releaseStateLock(stores, ended);
    }
    if (rule.audited) {
      await recordAudit(stores, this.deps, options.actor, {
        action: status === 'CANCELLED' ? 'job.cancel' : 'job.fail',
        target: { type: 'job', id: job.id },
        owner_id: job.owner_id,
        details: { job_type: job.job_type, status_before: job.status, reason: options.reason },
      });
    }
    await this.runHooks(stores, deferred, ended, {
      moment: options.reason,
      from: job.status,
      at,
      ...(vine === null ? {} : { vine }),
    });
    return ended;
  }

  /**
   * Puts a claimed job back in the queue (`unclaim`): the agent it was given to never got the
   * claim's answer, so no engine started and nothing ran. The claim is undone (its agent, its
   * time, its vine's move), audited (`job.requeue`, by that agent), then the `requeued` hooks (idle
   * agents wake up). Null when the job changed meanwhile: nothing was done.
   */
  async requeue(stores: Stores, job: Job, actor: AuditBy): Promise<Job | null> {
    const deferred = this.unitOf(stores);
    const status = transitionJob(job.status, 'unclaim');
    const at = isoNow(this.deps);
    const queued = await stores.jobs.update(job.owner_id, job.id, job.status, {
      status,
      claimed_by_worker_id: null,
      claimed_at: null,
      vine_status_before: null,
    });
    if (!queued) return null;
    if (job.vine_id !== null && job.vine_status_before !== null) {
      const vine = await stores.vines.get(job.owner_id, job.vine_id);
      if (vine) {
        const restored = transitionVine(vine.status, { type: 'job_cancelled', restore: job.vine_status_before });
        await stores.vines.updateStatus(job.owner_id, vine.id, restored, null, at);
      }
    }
    await recordAudit(stores, this.deps, actor, {
      action: 'job.requeue',
      target: { type: 'job', id: job.id },
      owner_id: job.owner_id,
      details: { job_type: job.job_type, status_before: job.status, reason: 'claim_unanswered' },
    });
    await this.runHooks(stores, deferred, queued, { moment: 'requeued', from: job.status, at });
    return queued;
  }

  /** A running job's report that only adds metadata (`PROCESSING` again): no hooks, no announcement. */
  async progress(stores: Stores, job: Job, metadata: ExecutionMetadata): Promise<Job> {
    const status = transitionJob(job.status, 'report_processing');
    const updated = await stores.jobs.update(job.owner_id, job.id, job.status, {
      status,
      execution_metadata: this.merged(job, metadata),
    });
    if (!updated) throw changedMeanwhile();
    return updated;
  }

  private async releasesStateLock(stores: Stores, job: Job, rule: EndReasonRule): Promise<boolean> {
    if (rule.releasesStateLock !== 'when_agent_offline') return rule.releasesStateLock;
    const agent = job.claimed_by_worker_id ? await stores.workers.get(job.owner_id, job.claimed_by_worker_id) : null;
    if (!agent) return true;
    const status = deriveWorkerStatus(agent, false, this.deps.clock.now(), this.deps.settings.heartbeatTimeoutSeconds);
    return status === 'OFFLINE' || status === 'DESTROYED';
  }

  private async giveWay(stores: Stores, vine: Vine): Promise<void> {
    const queued = await stores.jobs.list(vine.owner_id, { vine_id: vine.id, status: 'QUEUED' });
    for (const check of queued.filter((job) => job.trigger.type === 'drift')) {
      await this.end(stores, check, 'cancel', { reason: 'gave_way', actor: 'system' });
    }
  }

  /** Each report is capped on its own; this caps what they add up to on the job. */
  private merged(job: Job, metadata: ExecutionMetadata): ExecutionMetadata {
    // Each known result is replaced whole, so the merge of typed results is typed.
    const merged: ExecutionMetadata = { ...job.execution_metadata, ...metadata };
    const limit = this.deps.settings.maxExecutionMetadataBytes;
    if (Buffer.byteLength(JSON.stringify(merged), 'utf8') > limit) {
      throw new TooLargeError(
        'metadata_too_large',
        `the job's execution_metadata, merged across its updates, must be at most ${limit} bytes`,
        limit,
      );
    }
    return merged;
  }

  private async runHooks(stores: Stores, deferred: AfterCommit[], job: Job, change: JobChange): Promise<void> {
    const context: JobHookContext = {
      stores,
      deps: this.deps,
      lifecycle: this,
      afterCommit: (effect) => deferred.push(effect),
    };
    for (const hook of this.hooks) {
      if (hook.on.includes(change.moment as JobMoment)) await hook.run(job, change, context);
    }
  }

  private unitOf(stores: Stores): AfterCommit[] {
    const deferred = this.units.get(stores);
    if (!deferred) {
      throw new Error('jobs are queued and ended only in a unit of work opened by JobLifecycle.run');
    }
    return deferred;
  }
}

/** The job changed between the read and the write (another unit of work moved it first). */
export function changedMeanwhile(): ConflictError {
  return new ConflictError('invalid_transition', 'the job changed while it was being updated');
}

function configurationOf(vine: Vine | null, commit: string | null): { snapshot: ConfigSnapshot; hash: string } {
  if (vine === null) throw new Error('a job without a vine is queued with its configuration');
  const snapshot = commit === null ? snapshotOfVine(vine) : snapshotOfVineAt(vine, commit);
  return { snapshot, hash: configHash(snapshot) };
}

/**
 * Mirrors the end of a job that ran on its vine (DESIGN §3 vine states); a speculative plan leaves
 * it. Returns the vine as it moved it (null when it did not).
 */
async function moveVine(stores: Stores, job: Job, at: string): Promise<Vine | null> {
  if (job.vine_id === null || job.job_type === 'DESTROY_WORKER' || isSpeculativeTrigger(job.trigger)) return null;
  const vine = await stores.vines.get(job.owner_id, job.vine_id);
  if (!vine) return null;
  const jobType = job.job_type as VineJobType;
  switch (job.status) {
    case 'SUCCESS':
      return stores.vines.updateStatus(
        job.owner_id,
        vine.id,
        transitionVine(vine.status, { type: 'job_succeeded', jobType }),
        null,
        at,
      );
    case 'FAILED':
      return stores.vines.updateStatus(
        job.owner_id,
        vine.id,
        transitionVine(vine.status, { type: 'job_failed' }),
        job.error_message,
        at,
      );
    case 'CANCELLED':
      return stores.vines.updateStatus(
        job.owner_id,
        vine.id,
        transitionVine(vine.status, { type: 'job_cancelled', restore: job.vine_status_before ?? 'NEW' }),
        null,
        at,
      );
    default:
      return null;
  }
}

/** The vine's state lock, released for an engine that cannot release it (see `releasesStateLock`). */
async function releaseStateLock(stores: Stores, job: Job): Promise<void> {
  if (job.vine_id === null) return;
  const lock = await stores.states.getLock(job.owner_id, job.vine_id);
  // A person's lock (`TerraformCloudLock`, taken through the protocol) is theirs to release.
  if (lock && lock.info.Operation !== 'TerraformCloudLock')
    await stores.states.releaseLock(job.owner_id, job.vine_id, lock.lock_id);
}
