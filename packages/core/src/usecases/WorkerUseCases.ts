import type { UserActor, WorkerActor } from '../domain/actors.js';
import { isOneOf, WORKER_MODES, type WorkerMode } from '../domain/enums.js';
import { gitSourceIssues } from '../domain/gitSource.js';
import { ForbiddenError, NotFoundError, UnauthorizedError, ValidationError } from '../domain/errors.js';
import { type PageQuery, type PageRequest, type PageResult, pageRequest, pageResult } from '../domain/pagination.js';
import type { JsonObject, Worker } from '../domain/records.js';
import { isUuid, requireName, requireUuid } from '../domain/validation.js';
import { deriveWorkerStatus } from '../domain/workerStatus.js';
import { isJobStateToken, openJobStateToken } from '../auth/jobStateToken.js';
import { generateWorkerToken, hashToken, tokenMatchesHash } from '../auth/workerToken.js';
import type { WorkerCredentialCache } from '../auth/WorkerCredentialCache.js';
import { ownerScope, type Scope, systemScope, visibleOwners } from '../ports/UnitOfWork.js';
import { recordAudit } from './audit.js';
import { Access, parseOwnerFilter } from './Access.js';
import type { HeartbeatBuffer } from './HeartbeatBuffer.js';
import { endJobsOfRestartedAgent, parseRunningJobIds, requeueUnansweredClaims } from '../jobs/agentRestart.js';
import type { JobLifecycle } from '../jobs/JobLifecycle.js';
import { announce, type CoreDeps, isoNow, isoSecondsBefore } from './CoreDeps.js';
import { publicWorker, type WorkerView } from './views.js';

export interface Registration {
  worker_id: string;
  worker_token: string;
}

export interface HeartbeatAnswer {
  cancel_job_ids: string[];
  heartbeat_interval_s: number;
  /** The agent's lease: it fences itself after two thirds of it without an answer (issue 30). */
  lost_job_timeout_s: number;
}

const MAX_METADATA_BYTES = 64 * 1024;
/** Compared against when the worker id is unknown, so both paths cost the same. */
const UNKNOWN_WORKER_HASH = hashToken('unknown worker');

export class WorkerUseCases {
  private readonly access: Access;

  constructor(
    private readonly deps: CoreDeps,
    private readonly credentials: WorkerCredentialCache,
    private readonly heartbeats: HeartbeatBuffer,
    private readonly lifecycle: JobLifecycle,
  ) {
    this.access = new Access(deps);
  }

  /**
   * The worker whose credentials these are when they were verified a moment ago (cached), with no
   * database read; null otherwise, and then `authenticate` decides. Lets the HTTP layer serve a
   * known agent before it spends anything (a failure-limit check) on unknown callers.
   */
  recognize(workerId: unknown, token: unknown): WorkerActor | null {
    if (!isUuid(workerId) || typeof token !== 'string' || token === '') return null;
    return this.credentials.lookup(workerId.toLowerCase(), token);
  }

  /**
   * `X-Worker-ID` + `X-Worker-Token` (SPEC §5.4). Every failure is the same `401`, whether the
   * id is malformed, unknown, destroyed or the token wrong. Credentials verified a moment ago are
   * reused (`WorkerCredentialCache`); the lookup is a read-only unit of work.
   */
  async authenticate(workerId: unknown, token: unknown): Promise<WorkerActor> {
    const refuse = () => new UnauthorizedError('invalid_worker_credentials', 'worker id or token is not valid');
    if (!isUuid(workerId) || typeof token !== 'string' || token === '') throw refuse();
    const id = workerId.toLowerCase();
    const cached = this.credentials.lookup(id, token);
    if (cached) return cached;
    const ticket = this.credentials.ticket();
    const worker = await this.deps.uow.read(systemScope, (stores) => stores.workers.getForAuthentication(id));
    const matches = tokenMatchesHash(token, worker?.token_hash ?? UNKNOWN_WORKER_HASH);
    if (!worker || !matches || worker.destroyed_at !== null) throw refuse();
    const actor = { workerId: worker.id, ownerId: worker.owner_id };
    this.credentials.remember(actor, worker.token_hash, ticket);
    return actor;
  }

  /**
   * The state backend's caller: the worker's own credentials, or (what the agent gives the engine)
   * the worker id with the state token of a job of `vineId` it claimed. The token opens only for
   * that worker and vine; `StateUseCases` then holds it to its one job, while the job runs.
   */
  async authenticateForState(workerId: unknown, password: unknown, vineId: unknown): Promise<WorkerActor> {
    if (!isJobStateToken(password)) return this.authenticate(workerId, password);
    const refuse = () =>
      new UnauthorizedError('invalid_state_token', 'the job state token is not valid for this configuration');
    if (!isUuid(workerId) || !isUuid(vineId)) throw refuse();
    const worker = await this.deps.uow.run(systemScope, (stores) =>
      stores.workers.getForAuthentication(workerId.toLowerCase()),
    );
    if (!worker || worker.destroyed_at !== null) throw refuse();
    let jobId: string;
    try {
      jobId = await openJobStateToken(this.deps.secrets, password, worker.id, vineId.toLowerCase());
    } catch {
      throw refuse();
    }
    return { workerId: worker.id, ownerId: worker.owner_id, stateJobId: jobId };
  }

  /**
   * `POST /api/workers/register` and `POST /api/cli/workers`: the token is shown only now. With
   * `org_id` the agent is the organization's (`agents.manage`) and claims only its jobs.
   */
  async register(user: UserActor, input: { name: unknown; mode?: unknown; org_id?: unknown }): Promise<Registration> {
    const mode = input.mode ?? 'self-hosted';
    if (!isOneOf(WORKER_MODES, mode)) {
      throw new ValidationError(`mode must be one of ${WORKER_MODES.join(', ')}`, [
        { path: 'mode', message: `must be one of ${WORKER_MODES.join(', ')}` },
      ]);
    }
    const name = requireName(input.name, 'name');
    const { ownerId } = await this.access.ownerFor(user, input.org_id, 'agents.manage');
    return this.create(ownerId, name, mode, {}, user);
  }

  /** `POST /api/tendrils/register` (CI only): a cloud-hosted agent for `owner_id`. */
  async registerTendril(input: { name: unknown; owner_id: unknown; metadata?: unknown }): Promise<Registration> {
    const name = requireName(input.name, 'name');
    const ownerId = requireUuid(input.owner_id, 'owner_id');
    const metadata = parseMetadata(input.metadata);
    const owner = await this.deps.uow.read(systemScope, (stores) => stores.users.get(ownerId));
    if (!owner) throw new NotFoundError('user');
    return this.create(ownerId, name, 'cloud', metadata, 'system');
  }

  /**
   * `POST /api/workers/heartbeat`: also tells the agent which of its jobs were cancelled. An
   * agent's first heartbeat names the jobs it runs (`running_job_ids`): the others it was
   * thought to run end at once (`endJobsOfRestartedAgent`), and the heartbeat is written with them.
   * With `after_unanswered_claim` the list follows a claim whose answer may have been lost, not a
   * restart: the jobs it leaves out never reached it and go back in the queue.
   */
  async heartbeat(
    worker: WorkerActor,
    input: { version: unknown; running_job_ids?: unknown; after_unanswered_claim?: unknown },
  ): Promise<HeartbeatAnswer> {
    const { version } = input;
    const running = parseRunningJobIds(input.running_job_ids);
    if (typeof version !== 'string' || version.trim() === '' || version.length > 100) {
      throw new ValidationError('version must be the agent version string', [
        { path: 'version', message: 'must be a non-empty string of at most 100 characters' },
      ]);
    }
    const now = this.deps.clock.now();
    const beat = { worker_id: worker.workerId, version, at: now.toISOString() };
    const since = isoSecondsBefore(now, this.deps.settings.cancelNoticeSeconds);
    // Usually only a read: the heartbeat itself waits for the next flush (`HeartbeatBuffer`).
    if (running !== undefined || this.heartbeats.mustWriteNow(worker.workerId, now)) {
      const cancelled = await this.lifecycle.run(ownerScope(worker.ownerId), async (stores) => {
        await stores.workers.recordHeartbeat(worker.ownerId, worker.workerId, version, beat.at);
        if (running !== undefined) {
          const settle = input.after_unanswered_claim === true ? requeueUnansweredClaims : endJobsOfRestartedAgent;
          await settle(stores, this.lifecycle, worker, running);
        }
        return stores.jobs.listCancelledForWorker(worker.ownerId, worker.workerId, since);
      });
      this.heartbeats.written(beat);
      return this.answer(cancelled);
    }
    const cancelled = await this.deps.uow.read(ownerScope(worker.ownerId), (stores) =>
      stores.jobs.listCancelledForWorker(worker.ownerId, worker.workerId, since),
    );
    this.heartbeats.queue(beat);
    return this.answer(cancelled);
  }

  private answer(cancelled: string[]): HeartbeatAnswer {
    const { heartbeatIntervalSeconds, lostJobTimeoutSeconds } = this.deps.settings;
    return {
      cancel_job_ids: cancelled,
      heartbeat_interval_s: heartbeatIntervalSeconds,
      lost_job_timeout_s: lostJobTimeoutSeconds,
    };
  }

  /** Writes the heartbeats queued since the last flush (the server does, every second and on shutdown). */
  flushHeartbeats(): Promise<number> {
    return this.heartbeats.flush();
  }

  /** A page of the owner's own workers, newest first. */
  async list(ownerId: string, query: PageQuery = {}): Promise<PageResult<WorkerView>> {
    return this.listIn(ownerScope(ownerId), pageRequest(query, this.deps.settings.pageLimits));
  }

  /** A page of the workers the person sees (their own and their organizations'), newest first. */
  async listForPerson(user: UserActor, query: PageQuery & { org_id?: unknown } = {}): Promise<PageResult<WorkerView>> {
    const request = pageRequest(query, this.deps.settings.pageLimits);
    return this.listIn(await this.access.readScope(user, parseOwnerFilter(query.org_id)), request);
  }

  private async listIn(scope: Scope | null, request: PageRequest): Promise<PageResult<WorkerView>> {
    if (scope === null) return pageResult({ items: [], next: null }, request, (worker: WorkerView) => worker);
    return this.deps.uow.read(scope, async (stores) => {
      const page = await stores.workers.page(visibleOwners(scope) ?? [], request);
      const busy: string[] = [];
      for (const ownerId of new Set(page.items.map((worker) => worker.owner_id))) {
        busy.push(...(await stores.jobs.busyWorkerIds(ownerId)));
      }
      return pageResult(page, request, (worker) => this.view(worker, busy.includes(worker.id)));
    });
  }

  /** One worker the person may see, with its deploy metadata (`GET /api/cli/workers/{id}`). */
  async getForPerson(user: UserActor, id: unknown): Promise<WorkerView> {
    const workerId = requireUuid(id, 'id');
    const { record } = await this.access.locate(user, 'read', 'worker_not_found', (stores, ownerId) =>
      stores.workers.get(ownerId, workerId),
    );
    return this.getOfOwner(record.owner_id, workerId, user.userId);
  }

  /** A worker of `ownerId` (`GET /api/workers/{id}`: the agent's own owner). */
  async get(ownerId: string, id: unknown): Promise<WorkerView> {
    return this.getOfOwner(ownerId, requireUuid(id, 'id'));
  }

  private async getOfOwner(ownerId: string, workerId: string, actorId?: string): Promise<WorkerView> {
    return this.deps.uow.read(ownerScope(ownerId, actorId), async (stores) => {
      const worker = await stores.workers.get(ownerId, workerId);
      if (!worker) throw new NotFoundError('worker');
      const busy = await stores.jobs.busyWorkerIds(ownerId);
      return this.view(worker, busy.includes(worker.id));
    });
  }

  /** `POST /api/workers/{id}/metadata`: an agent records its own deployment state. */
  async updateMetadata(worker: WorkerActor, id: unknown, metadata: unknown): Promise<WorkerView> {
    const workerId = requireUuid(id, 'id');
    const parsed = parseMetadata(metadata);
    if (workerId !== worker.workerId) {
      throw new ForbiddenError('not_this_worker', 'a worker may only update its own metadata');
    }
    const updated = await this.deps.uow.run(ownerScope(worker.ownerId), (stores) =>
      stores.workers.updateMetadata(worker.ownerId, workerId, parsed),
    );
    return this.getOfOwner(worker.ownerId, updated.id);
  }

  private async create(
    ownerId: string,
    name: string,
    mode: WorkerMode,
    metadata: JsonObject,
    by: UserActor | 'system',
  ): Promise<Registration> {
    const token = generateWorkerToken(this.deps.random);
    const worker: Worker = {
      id: this.deps.random.uuid(),
      owner_id: ownerId,
      name,
      mode,
      token_hash: hashToken(token),
      last_heartbeat: null,
      version: null,
      metadata,
      created_at: isoNow(this.deps),
      destroyed_at: null,
    };
    const scope = ownerScope(ownerId, by === 'system' ? undefined : by.userId);
    await this.deps.uow.run(scope, async (stores) => {
      await stores.workers.create(worker);
      await recordAudit(stores, this.deps, by, {
        action: 'worker.register',
        target: { type: 'worker', id: worker.id },
        owner_id: ownerId,
        details: { name, mode },
      });
    });
    // Nothing should be cached for a new id; if anything is (an id registered again), it goes.
    this.credentials.forget(worker.id);
    await announce(this.deps.events, { type: 'worker_credentials_changed', owner_id: ownerId, worker_id: worker.id });
    return { worker_id: worker.id, worker_token: token };
  }

  private view(worker: Worker, busy: boolean): WorkerView {
    return {
      ...publicWorker(worker),
      status: deriveWorkerStatus(worker, busy, this.deps.clock.now(), this.deps.settings.heartbeatTimeoutSeconds),
    };
  }
}

function parseMetadata(value: unknown): JsonObject {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new ValidationError('metadata must be an object', [{ path: 'metadata', message: 'must be an object' }]);
  }
  if (Buffer.byteLength(JSON.stringify(value)) > MAX_METADATA_BYTES) {
    throw new ValidationError(`metadata must be at most ${MAX_METADATA_BYTES} bytes`, [
      { path: 'metadata', message: 'too large' },
    ]);
  }
  checkDeploySource((value as { deploy?: unknown }).deploy);
  return value as JsonObject;
}

/** A git source in `metadata.deploy` reaches git on a `DESTROY_WORKER`: the same rule as a vine's. */
function checkDeploySource(deploy: unknown): void {
  if (typeof deploy !== 'object' || deploy === null) return;
  const source = (deploy as { source?: unknown }).source as Record<string, unknown> | undefined;
  if (typeof source !== 'object' || source === null || source.type !== 'git' || typeof source.url !== 'string') return;
  const text = (field: unknown) => (typeof field === 'string' ? field : null);
  const issues = gitSourceIssues(
    { url: source.url, ref: text(source.ref), path: text(source.path) },
    { allowFile: true },
  ).map((issue) => ({ ...issue, path: `metadata.deploy.${issue.path}` }));
  if (issues.length > 0) throw new ValidationError('metadata.deploy.source is not a valid git source', issues);
}
