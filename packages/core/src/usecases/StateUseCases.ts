import type { Readable } from 'node:stream';
import { verifiedArtifactBody } from '../artifacts/VerifiedBody.js';
import { announceLateState, endedJobOfToken, judgeLateWrite } from '../stateAfterLost/lateWrite.js';
import { type WriteAuthority, writeStateVersion } from './stateVersionWriter.js';
import type { WorkerActor } from '../domain/actors.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../domain/errors.js';
import type { Job, JsonObject, StateLock, StateVersion } from '../domain/records.js';
import { stateAccessOf } from '../domain/stateAccess.js';
import { requireUuid } from '../domain/validation.js';
import { ownerScope, type Stores } from '../ports/UnitOfWork.js';
import { type CoreDeps, isoNow, isoSecondsBefore } from './CoreDeps.js';

export type LockOutcome = { acquired: true; lock: StateLock } | { acquired: false; current: StateLock };
export type UnlockOutcome = { released: true } | { released: false; current: StateLock };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The OpenTofu/Terraform `http` state backend of DESIGN §7: each vine's state lives in the
 * control plane, so a plan made by one agent can be applied by another. Only an agent running a
 * job of the vine may read, write or lock its state.
 */
export class StateUseCases {
  constructor(private readonly deps: CoreDeps) {}

  /** The newest state, or null before the first write. */
  async read(worker: WorkerActor, vine: unknown): Promise<{ body: Readable; size: number; sha256: string } | null> {
    const vineId = requireUuid(vine, 'vine_id');
    const latest = await this.deps.uow.run(ownerScope(worker.ownerId), async (stores) => {
      // The engine of a job failed as lost reads too, before its late write (issue 30): a new
      // state's engine first checks whether one exists.
      if (!(await this.endedJob(stores, worker, vineId))) await this.runningJob(stores, worker, vineId);
      return stores.states.latest(worker.ownerId, vineId);
    });
    if (!latest) return null;
    const artifact = await this.deps.artifacts.get(latest.storage_key);
    const body = verifiedArtifactBody(latest.storage_key, artifact.body, artifact.size, latest);
    return { body, size: latest.size, sha256: latest.sha256 };
  }

  /**
   * Stores a new version. When the state is locked, the writer must present the lock's id
   * (the backend sends it as `?ID=`); otherwise `409 state_locked`. The writer is authorized and a
   * declared size over the limit refused before a byte of the body is read; the body then streams
   * into the artifact store, which stops at the limit, while its serial and lineage are read.
   *
   * The engine of a job already failed (lost: its agent was cut off) still writes with its job's
   * token (issue 30): the version is `after_lost`, the current state when no later job had the
   * vine, otherwise kept `rejected` and answered `409 state_rejected`.
   */
  async write(
    worker: WorkerActor,
    vine: unknown,
    lockId: string | null,
    body: AsyncIterable<Uint8Array>,
    declaredBytes: number | null = null,
  ): Promise<StateVersion> {
    const vineId = requireUuid(vine, 'vine_id');
    const version = await writeStateVersion(this.deps, {
      scope: ownerScope(worker.ownerId),
      ownerId: worker.ownerId,
      vineId,
      createdBy: null,
      body,
      declaredBytes,
      authorize: (stores) => this.writeAuthority(stores, worker, vineId, lockId),
    });
    if (version.rejected) {
      throw new ConflictError(
        'state_rejected',
        `this job was failed as lost and a later job has the configuration since: the state was kept as rejected version ${version.id}, not made current`,
      );
    }
    return version;
  }

  private async writeAuthority(
    stores: Stores,
    worker: WorkerActor,
    vineId: string,
    lockId: string | null,
  ): Promise<WriteAuthority> {
    const ended = await this.endedJob(stores, worker, vineId);
    if (!ended) {
      const job = requireWriteAccess(await this.runningJob(stores, worker, vineId));
      await this.requireLockHolder(stores, worker.ownerId, vineId, lockId);
      return { jobId: job.id };
    }
    return {
      jobId: ended.id,
      judge: async (judging, header) => {
        const verdict = await judgeLateWrite(judging, ended, lockId, header);
        await announceLateState(judging, this.deps, ended);
        return verdict;
      },
    };
  }

  /**
   * The writer's job when its token names a job already failed, which may still write late
   * (issue 30); null when it runs (or the token names no such job: `runningJob` then refuses).
   */
  private async endedJob(stores: Stores, worker: WorkerActor, vineId: string): Promise<Job | null> {
    if (!(await stores.vines.get(worker.ownerId, vineId))) throw new NotFoundError('configuration');
    const ended = await endedJobOfToken(stores, worker, vineId);
    return ended && requireWriteAccess(ended);
  }

  /** `LOCK`: takes the lock with the engine's lock info, or reports who holds it. */
  async lock(worker: WorkerActor, vine: unknown, info: unknown): Promise<LockOutcome> {
    const vineId = requireUuid(vine, 'vine_id');
    const lockInfo = parseLockInfo(info);
    return this.deps.uow.run(ownerScope(worker.ownerId), async (stores) => {
      requireWriteAccess(await this.runningJob(stores, worker, vineId));
      const lock: StateLock = {
        owner_id: worker.ownerId,
        vine_id: vineId,
        lock_id: lockInfo.ID as string,
        info: lockInfo,
        created_at: isoNow(this.deps),
      };
      const outcome = await stores.states.acquireLock(lock);
      if (outcome.acquired) return { acquired: true, lock };
      // The same lock ID asked again (its answer was lost): the engine already holds it.
      if (outcome.current.lock_id === lock.lock_id) return { acquired: true, lock: outcome.current };
      return outcome;
    });
  }

  /**
   * `UNLOCK`: releases the lock if the id matches (as `force-unlock` does too). Exact when
   * retried: a lock already free is released (the first answer was lost, or the job's end
   * released it), so only another lock's holder is refused. The engine of a job already failed
   * (issue 30) may still release its own lock.
   */
  async unlock(worker: WorkerActor, vine: unknown, info: unknown): Promise<UnlockOutcome> {
    const vineId = requireUuid(vine, 'vine_id');
    const lockInfo = parseLockInfo(info);
    return this.deps.uow.run(ownerScope(worker.ownerId), async (stores) => {
      if (!(await this.endedJob(stores, worker, vineId)))
        requireWriteAccess(await this.runningJob(stores, worker, vineId));
      if (await stores.states.releaseLock(worker.ownerId, vineId, lockInfo.ID as string)) return { released: true };
      const current = await stores.states.getLock(worker.ownerId, vineId);
      return current ? { released: false, current } : { released: true };
    });
  }

  /** The versions of a vine's state, for people (`GET` of a configuration's state history). */
  async versions(ownerId: string, vine: unknown): Promise<StateVersion[]> {
    const vineId = requireUuid(vine, 'vine_id');
    return this.deps.uow.run(ownerScope(ownerId), async (stores) => {
      if (!(await stores.vines.get(ownerId, vineId))) throw new NotFoundError('configuration');
      return stores.states.listVersions(ownerId, vineId);
    });
  }

  /**
   * The job of this vine the worker runs: `PROCESSING`, or `CANCELLED` within the cancel notice
   * window, because after a cancel the engine gets SIGINT and must still write its last state and
   * release its lock while it winds down (DESIGN §3).
   */
  private async runningJob(stores: Stores, worker: WorkerActor, vineId: string): Promise<Job> {
    if (!(await stores.vines.get(worker.ownerId, vineId))) throw new NotFoundError('configuration');
    const running = await stores.jobs.list(worker.ownerId, { vine_id: vineId, status: 'PROCESSING' });
    const mine = running.find((job) => job.claimed_by_worker_id === worker.workerId);
    if (mine) return this.ofTheToken(worker, mine);
    const windingDownSince = isoSecondsBefore(this.deps.clock.now(), this.deps.settings.cancelNoticeSeconds);
    const cancelled = await stores.jobs.list(worker.ownerId, { vine_id: vineId, status: 'CANCELLED' });
    const windingDown = cancelled.find(
      (job) =>
        job.claimed_by_worker_id === worker.workerId &&
        job.finished_at !== null &&
        Date.parse(job.finished_at) >= Date.parse(windingDownSince),
    );
    if (windingDown) return this.ofTheToken(worker, windingDown);
    throw new ForbiddenError('state_not_for_worker', 'this agent is not running a job of this configuration');
  }

  /** A job state token opens the state only for its own job: a later job of the vine needs its own. */
  private ofTheToken(worker: WorkerActor, job: Job): Job {
    if (worker.stateJobId !== undefined && worker.stateJobId !== job.id) {
      throw new ForbiddenError('state_not_for_worker', 'this state token belongs to a job that is no longer running');
    }
    return job;
  }

  private async requireLockHolder(stores: Stores, ownerId: string, vineId: string, lockId: string | null) {
    const lock = await stores.states.getLock(ownerId, vineId);
    if (lock && lock.lock_id !== lockId) {
      throw new ConflictError('state_locked', `the state is locked by ${String(lock.info.Who ?? 'another run')}`);
    }
  }
}

/**
 * A speculative plan (a pull request's plan, a drift check) only reads the state (issue 23): with
 * the job's state token or the worker's own credentials alike, it never writes, locks or unlocks it.
 */
function requireWriteAccess(job: Job): Job {
  if (stateAccessOf(job) === 'write') return job;
  throw new ForbiddenError(
    'state_read_only',
    "this job is a speculative plan (a pull request's plan or a drift check): it may read the state, never write, lock or unlock it; plan with -lock=false",
  );
}

function parseLockInfo(info: unknown): JsonObject {
  if (!isObject(info) || typeof info.ID !== 'string' || info.ID === '' || info.ID.length > 200) {
    throw new ValidationError('the lock info must carry an ID', [{ path: 'ID', message: 'required' }], 'invalid_lock');
  }
  return info as JsonObject;
}
