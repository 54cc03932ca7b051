import { requireRunnableSource } from '../tfe/workspaces.js';
import { recordAudit } from './audit.js';
import type { WorkerCredentialCache } from '../auth/WorkerCredentialCache.js';
import type { HeartbeatBuffer } from './HeartbeatBuffer.js';
import type { UserActor, WorkerActor } from '../domain/actors.js';
import {
  isOneOf,
  JOB_STATUSES,
  JOB_TYPES,
  type JobStatus,
  REPORTABLE_JOB_STATUSES,
  type ReportableJobStatus,
} from '../domain/enums.js';
import { ConflictError, ForbiddenError, NotFoundError, TooLargeError, ValidationError } from '../domain/errors.js';
import { type PageQuery, type PageResult, pageRequest, pageResult } from '../domain/pagination.js';
import { type JobEvent, isTerminalJobStatus, transitionJob } from '../domain/jobStateMachine.js';
import {
  type CloudIdentitySettings,
  type ConfigSnapshot,
  cloudIdentitySettings,
  isSpeculativeTrigger,
  type Job,
  type JobSummary,
  type JsonObject,
  type Vineyard,
} from '../domain/records.js';
import type { JobTokenSubject, WorkloadIdentityUseCases } from './WorkloadIdentityUseCases.js';
import { optionalUuid, requireUuid } from '../domain/validation.js';
import { type VineJobType, transitionVine } from '../domain/vineStateMachine.js';
import { issueJobStateToken } from '../auth/jobStateToken.js';
import { type StateAccess, stateAccessOf } from '../domain/stateAccess.js';
import { jobForAgent, secretsWithheld, withheldSecretsNote } from '../vcs/forkPullRequests.js';
import {
  configHash,
  pinnedCommitOf,
  snapshotOfVine,
  snapshotOfVineAt,
  snapshotOfWorkerTarget,
} from '../snapshot/configSnapshot.js';
import type { JobFilter, JobPatch } from '../ports/JobStore.js';
import { ownerScope, type Stores, systemScope, visibleOwners } from '../ports/UnitOfWork.js';
import { Access, parseOwnerFilter } from './Access.js';
import { announce, type CoreDeps, isoNow, isoSecondsBefore } from './CoreDeps.js';
import { extractDeploymentOutputs, finalizeDeployment, redactSensitiveOutputs } from './finalizeDeployment.js';
import { enqueueJobEnd } from './notificationOutbox.js';
import { enqueueVcsFeedback } from './vcsFeedback.js';
import { jobForPeople, type JobView } from './views.js';
import type { PolicyToEvaluate } from '../domain/policies.js';
import { policiesForVine } from './PolicyUseCases.js';
import { afterJobFinished, cancelQueuedDriftChecks, isDriftCheck } from './DriftUseCases.js';
import {
  checkPlanReviews,
  enqueuePlanNeedsApproval,
  requireNoApprovalForPlanlessDeploy,
} from './PlanReviewUseCases.js';
import type { ApprovalSetting } from '../domain/policies.js';
import type { GitProvider } from '../domain/enums.js';
import type { VcsConnection } from '../domain/vcs.js';
import { vcsTokenFor } from './vcsTokens.js';

/**
 * The HTTPS username each provider expects with an OAuth access token as the password
 * (GitHub `x-access-token`, GitLab `oauth2`, Bitbucket `x-token-auth`).
 */
export const GIT_TOKEN_USERNAMES: Readonly<Record<GitProvider, string>> = {
  github: 'x-access-token',
  gitlab: 'oauth2',
  bitbucket: 'x-token-auth',
};

export interface CreateJobInput {
  job_type: unknown;
  configuration_id?: unknown;
  assigned_worker_id?: unknown;
  plan_job_id?: unknown;
  target_worker_id?: unknown;
}

export interface StatusReport {
  status: unknown;
  execution_metadata?: unknown;
  error_message?: unknown;
}

export interface ClaimedJob {
  job: Job;
  cloud_identity: CloudIdentitySettings | null;
  /**
   * For a vine whose cloud identity is `oidc` (issue 16): the job's token signed by this control
   * plane's OIDC issuer, which the cloud exchanges for short-lived credentials. Null otherwise.
   */
  identity_token: string | null;
  /**
   * For the engine's `http` state backend (Basic auth: worker id, this token), instead of the worker
   * token: valid for this job's vine only, while the job runs. Null for a job without a vine.
   */
  state_token: string | null;
  /** A PLAN's (and drift check's): the policies that apply to its vine, at their current version (issue 15). */
  policies: PolicyToEvaluate[];
  /** The vineyard of the job's vine, for `input.trellis.vineyard` of the policies; null without a vine. */
  vineyard: { id: string; name: string } | null;
  /**
   * Issue 13: HTTPS credentials for cloning the git source of a vine connected to a repository —
   * the connecting user's provider token, fetched (renewed) at claim time, never stored in the job
   * or its snapshot. Null for other jobs, and when the token could not be had: the claim still
   * succeeds, the reason goes into the job's log, and the clone fails with git's own message.
   */
  source_credentials: { username: string; password: string } | null;
  /** `read` for a speculative plan: its state token never writes or locks the state (plan with `-lock=false`). */
  state_access: StateAccess;
}

const REPORT_EVENTS: Readonly<Record<ReportableJobStatus, JobEvent>> = {
  PROCESSING: 'report_processing',
  SUCCESS: 'report_success',
  FAILED: 'report_failed',
  CANCELLED: 'report_cancelled',
};

const MAX_ERROR_MESSAGE = 4000;
const MAX_METADATA_BYTES = 256 * 1024;

export class JobUseCases {
  private readonly access: Access;

  constructor(
    private readonly deps: CoreDeps,
    private readonly credentials: WorkerCredentialCache,
    private readonly heartbeats: HeartbeatBuffer,
    private readonly workloadIdentity?: WorkloadIdentityUseCases,
  ) {
    this.access = new Access(deps);
  }

  /** `POST /api/jobs`: snapshot and hash of the vine, plan checks (DESIGN §3). */
  async create(user: UserActor, input: CreateJobInput): Promise<JobView> {
    if (!isOneOf(JOB_TYPES, input.job_type)) {
      throw new ValidationError(`job_type must be one of ${JOB_TYPES.join(', ')}`, [
        { path: 'job_type', message: `must be one of ${JOB_TYPES.join(', ')}` },
      ]);
    }
    const jobType = input.job_type;
    const vineId = optionalUuid(input.configuration_id, 'configuration_id');
    const assignedWorkerId = optionalUuid(input.assigned_worker_id, 'assigned_worker_id');
    const planJobId = optionalUuid(input.plan_job_id, 'plan_job_id');
    const targetWorkerId = optionalUuid(input.target_worker_id, 'target_worker_id');
    if (jobType === 'DESTROY_WORKER' && targetWorkerId === null) {
      throw new ValidationError('a DESTROY_WORKER job needs target_worker_id', [
        { path: 'target_worker_id', message: 'required for DESTROY_WORKER' },
      ]);
    }
    if (jobType !== 'DESTROY_WORKER' && vineId === null) {
      throw new ValidationError(`a ${jobType} job needs configuration_id`, [
        { path: 'configuration_id', message: `required for ${jobType}` },
      ]);
    }
    if (planJobId !== null && jobType !== 'DEPLOY') {
      throw new ValidationError('plan_job_id is only for DEPLOY jobs', [
        { path: 'plan_job_id', message: 'only for DEPLOY' },
      ]);
    }
    if (assignedWorkerId !== null && assignedWorkerId === targetWorkerId) {
      throw new ValidationError('a worker cannot run its own DESTROY_WORKER job', [
        { path: 'assigned_worker_id', message: 'must differ from target_worker_id' },
      ]);
    }

    // A job belongs to its vine's owner (to its target's, for DESTROY_WORKER).
    const located =
      jobType === 'DESTROY_WORKER'
        ? await this.access.locate(user, 'agents.manage', 'worker_not_found', (stores, ownerId) =>
            stores.workers.get(ownerId, targetWorkerId as string),
          )
        : await this.access.locate(user, 'jobs.run', 'configuration_not_found', (stores, ownerId) =>
            stores.vines.get(ownerId, vineId as string),
          );
    const ownerId = located.record.owner_id;
    const queued = await this.deps.uow.run(located.scope, async (stores) => {
      if (assignedWorkerId !== null) await this.requireLiveWorker(stores, ownerId, assignedWorkerId);
      let snapshot: ConfigSnapshot;
      let vine: {
        id: string;
        vineyard_id: string;
        cloud_identity_id: string | null;
        approval: ApprovalSetting | null;
      } | null = null;
      if (jobType === 'DESTROY_WORKER') {
        snapshot = snapshotOfWorkerTarget(await this.requireLiveWorker(stores, ownerId, targetWorkerId as string));
      } else {
        const found = await stores.vines.get(ownerId, vineId as string);
        if (!found) throw new NotFoundError('configuration');
        requireRunnableSource(found);
        vine = found;
        // A DEPLOY of a git-driven plan deploys the commit that plan pinned (and its hash compares with the plan's).
        const plan = planJobId === null ? null : await stores.jobs.get(ownerId, planJobId);
        const commit = plan?.vine_id === found.id ? pinnedCommitOf(plan.config_snapshot) : null;
        snapshot = commit === null ? snapshotOfVine(found) : snapshotOfVineAt(found, commit);
      }
      const hash = configHash(snapshot);
      if (planJobId !== null && vine !== null) {
        await this.checkPlan(stores, ownerId, planJobId, vine.id, hash, vine.approval);
      } else if (jobType === 'DEPLOY' && vine !== null) {
        // A vine that requires approval deploys only an approved plan: a DEPLOY without one is refused.
        requireNoApprovalForPlanlessDeploy(vine.approval);
      }
      // A person's job never waits behind a drift check: queued checks of the vine give way.
      const givenWay = vine === null ? [] : await cancelQueuedDriftChecks(stores, ownerId, vine.id, isoNow(this.deps));
      const created = await stores.jobs.create({
        id: this.deps.random.uuid(),
        owner_id: ownerId,
        job_type: jobType,
        status: 'QUEUED',
        config_snapshot: snapshot,
        config_hash: hash,
        vine_id: vine?.id ?? null,
        vineyard_id: vine?.vineyard_id ?? null,
        cloud_identity_id: vine?.cloud_identity_id ?? null,
        assigned_worker_id: assignedWorkerId,
        claimed_by_worker_id: null,
        plan_job_id: planJobId,
        target_worker_id: jobType === 'DESTROY_WORKER' ? targetWorkerId : null,
        execution_metadata: {},
        error_message: null,
        vine_status_before: null,
        trigger: { type: 'manual' },
        created_by: user.userId,
        approval: null,
        policy_override: null,
        created_at: isoNow(this.deps),
        claimed_at: null,
        finished_at: null,
      });
      await recordAudit(stores, this.deps, user, {
        action: 'job.create',
        target: { type: 'job', id: created.id },
        owner_id: ownerId,
        details: { job_type: jobType, vine_id: created.vine_id, target_worker_id: created.target_worker_id },
      });
      // A git-triggered job's commit gets its pending status (nothing for a person's job).
      await enqueueVcsFeedback(stores, this.deps, created, 'queued');
      return { created, givenWay };
    });
    const job = queued.created;
    for (const cancelled of queued.givenWay) await this.announceStatus(cancelled);
    await announce(this.deps.events, { type: 'job_queued', owner_id: ownerId, job_id: job.id });
    return jobForPeople(job);
  }

  /** A page of the owner's jobs, newest first, as summaries (`GET /api/jobs`). */
  async list(
    user: UserActor,
    query: { status?: unknown; vineyard_id?: unknown; vine_id?: unknown; org_id?: unknown } & PageQuery = {},
  ): Promise<PageResult<JobSummary & { speculative: boolean }>> {
    const request = pageRequest(query, this.deps.settings.pageLimits);
    const filter: JobFilter = {};
    if (query.status !== undefined) {
      if (!isOneOf(JOB_STATUSES, query.status)) {
        throw new ValidationError(`status must be one of ${JOB_STATUSES.join(', ')}`, [
          { path: 'status', message: `must be one of ${JOB_STATUSES.join(', ')}` },
        ]);
      }
      filter.status = query.status;
    }
    if (query.vineyard_id !== undefined) filter.vineyard_id = requireUuid(query.vineyard_id, 'vineyard_id');
    if (query.vine_id !== undefined) filter.vine_id = requireUuid(query.vine_id, 'vine_id');
    const scope = await this.access.readScope(user, parseOwnerFilter(query.org_id));
    const page =
      scope === null
        ? { items: [], next: null }
        : await this.deps.uow.read(scope, (stores) => stores.jobs.page(visibleOwners(scope) ?? [], request, filter));
    return pageResult(page, request, (job) => ({ ...job, speculative: isSpeculativeTrigger(job.trigger) }));
  }

  /** The DEPLOY job that applies (or is applying) this plan, if any: a plan is applied at most once. */
  async deployOfPlan(user: UserActor, planJobId: string): Promise<JobView | null> {
    const { record, scope } = await this.access.locate(user, 'read', 'job_not_found', (stores, ownerId) =>
      stores.jobs.get(ownerId, planJobId),
    );
    const deploys = await this.deps.uow.read(scope, (stores) =>
      stores.jobs.listDeploysOfPlan(record.owner_id, planJobId),
    );
    const deploy = deploys[0];
    return deploy === undefined ? null : jobForPeople(deploy);
  }

  async get(user: UserActor, id: unknown): Promise<JobView> {
    const jobId = requireUuid(id, 'id');
    const { record } = await this.access.locate(user, 'read', 'job_not_found', (stores, ownerId) =>
      stores.jobs.get(ownerId, jobId),
    );
    return jobForPeople(record);
  }

  /** The job as its owner's agents may see it (unredacted: they run it). */
  async getForWorker(worker: WorkerActor, id: unknown): Promise<Job> {
    return jobForAgent(await this.find(worker.ownerId, id));
  }

  /** `POST /api/cli/jobs/{id}/cancel`: a `QUEUED` or `PROCESSING` job becomes `CANCELLED` at once. */
  async cancel(user: UserActor, id: unknown): Promise<JobView> {
    const jobId = requireUuid(id, 'id');
    const located = await this.access.locate(user, 'jobs.run', 'job_not_found', (stores, ownerId) =>
      stores.jobs.get(ownerId, jobId),
    );
    const job = await this.deps.uow.run(located.scope, async (stores) => {
      const current = await stores.jobs.get(located.record.owner_id, jobId);
      if (!current) throw new NotFoundError('job');
      const status = transitionJob(current.status, 'cancel');
      const updated = await this.applyUpdate(stores, current, {
        status,
        finished_at: isoNow(this.deps),
        error_message: 'cancelled by user',
      });
      if (current.status === 'PROCESSING') await this.moveVine(stores, updated);
      await enqueueJobEnd(stores, this.deps, updated);
      await enqueueVcsFeedback(stores, this.deps, updated, 'ended');
      await recordAudit(stores, this.deps, user, {
        action: 'job.cancel',
        target: { type: 'job', id: jobId },
        owner_id: current.owner_id,
        details: { job_type: current.job_type, status_before: current.status },
      });
      return updated;
    });
    await this.announceStatus(job);
    return jobForPeople(job);
  }

  /** `POST /api/jobs/claim`: the next job for this worker, or null (`204`). */
  async claim(worker: WorkerActor): Promise<ClaimedJob | null> {
    const claimed = await this.deps.uow.run(ownerScope(worker.ownerId), async (stores) => {
      const claim = await stores.jobs.claimNext({ id: worker.workerId, owner_id: worker.ownerId }, isoNow(this.deps));
      if (!claim) return null;
      const { job, vine, vineyard, cloud_identity: identity } = claim;
      // The store moved the vine by JOB_CLAIM's table; a vine no job may start from is refused
      // here (409 invalid_transition), which rolls the claim back with the unit of work.
      if (vine !== null) {
        const status = transitionVine(vine.before, { type: 'job_started', jobType: job.job_type as VineJobType });
        if (vine.after !== status) {
          throw new Error(`the store moved vine ${job.vine_id} to ${vine.after}, not ${status}`);
        }
      }
      const policies =
        job.job_type === 'PLAN' && job.vine_id !== null
          ? await policiesForVine(stores, job.owner_id, job.vineyard_id)
          : [];
      const source = job.config_snapshot.source;
      // A fork's pull request planned without secrets (issue 23): no identity, no clone credentials.
      const withheld = secretsWithheld(job);
      if (withheld)
        await stores.logs.append(job.owner_id, job.id, withheldSecretsNote(job), 'SYSTEM', isoNow(this.deps));
      const connection =
        job.vine_id !== null && source?.type === 'git' && !withheld
          ? await stores.vcs.get(job.owner_id, job.vine_id)
          : null;
      const subject = identity?.kind === 'oidc' && !withheld ? await tokenSubjectOf(stores, job, vineyard) : null;
      return {
        connection,
        subject,
        job: jobForAgent(job),
        policies,
        vineyard: vineyard ? { id: vineyard.id, name: vineyard.name } : null,
        cloud_identity: identity && !withheld ? cloudIdentitySettings(identity) : null,
        state_access: stateAccessOf(job),
      };
    });
    if (!claimed) return null;
    const { connection, subject, ...rest } = claimed;
    await this.announceStatus(rest.job);
    const { job, cloud_identity } = rest;
    const state_token =
      job.vine_id === null
        ? null
        : await issueJobStateToken(this.deps.secrets, { id: job.id, workerId: worker.workerId, vineId: job.vine_id });
    let identity_token: string | null = null;
    if (cloud_identity?.kind === 'oidc' && subject && this.workloadIdentity) {
      try {
        identity_token = await this.workloadIdentity.mintJobToken(job, cloud_identity, subject);
      } catch (error) {
        // The agent never learns of this job: fail it rather than leave it PROCESSING for nobody.
        await this.failUnstartable(worker, job.id, 'the control plane could not issue the job its identity token');
        throw error;
      }
    }
    const source_credentials = connection ? await this.sourceCredentials(job, connection) : null;
    return { ...rest, state_token, identity_token, source_credentials };
  }

  /**
   * The clone credentials of a connected vine's job: the connecting user's token (system scope:
   * their identities are theirs, not the vine owner's). A token that cannot be had leaves the
   * claim standing with none; the reason is written to the job's log, where people look first.
   */
  private async sourceCredentials(
    job: Job,
    connection: VcsConnection,
  ): Promise<{ username: string; password: string } | null> {
    try {
      const token = await this.deps.uow.run(systemScope, (stores) => vcsTokenFor(stores, this.deps, connection));
      return { username: GIT_TOKEN_USERNAMES[connection.provider], password: token };
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      await this.deps.uow.run(ownerScope(job.owner_id), (stores) =>
        stores.logs.append(
          job.owner_id,
          job.id,
          `trellis: no credentials for cloning ${connection.repository}: ${reason}; the clone runs without them\n`,
          'SYSTEM',
          isoNow(this.deps),
        ),
      );
      return null;
    }
  }

  /**
   * `PUT /api/jobs/{id}/status` from the agent that claimed the job. A failure moves the vine to
   * `FAILED` with the message; a successful DEPLOY runs finalizeDeployment in the same unit of work.
   */
  async reportStatus(worker: WorkerActor, id: unknown, report: StatusReport): Promise<Job> {
    const jobId = requireUuid(id, 'id');
    if (report.status === 'QUEUED') {
      throw new ValidationError('QUEUED is not a valid status update', [
        { path: 'status', message: `must be one of ${REPORTABLE_JOB_STATUSES.join(', ')}` },
      ]);
    }
    if (!isOneOf(REPORTABLE_JOB_STATUSES, report.status)) {
      throw new ValidationError(`status must be one of ${REPORTABLE_JOB_STATUSES.join(', ')}`, [
        { path: 'status', message: `must be one of ${REPORTABLE_JOB_STATUSES.join(', ')}` },
      ]);
    }
    const reported = report.status;
    const metadata = redactSensitiveOutputs(parseMetadata(report.execution_metadata));
    const errorMessage = parseErrorMessage(report.error_message);

    const { updated: job, triggered } = await this.deps.uow.run(ownerScope(worker.ownerId), async (stores) => {
      const current = await this.requireClaimedBy(stores, worker, jobId);
      const status = transitionJob(current.status, REPORT_EVENTS[reported]);
      const merged = { ...current.execution_metadata, ...metadata };
      this.requireMetadataWithinCap(merged);
      const outputs = status === 'SUCCESS' && current.job_type === 'DEPLOY' ? extractDeploymentOutputs(merged) : null;
      const at = isoNow(this.deps);
      const updated = await this.applyUpdate(stores, current, {
        status,
        execution_metadata: merged,
        ...(isTerminalJobStatus(status) ? { finished_at: at } : {}),
        ...(status === 'FAILED' ? { error_message: errorMessage ?? 'the job failed' } : {}),
        ...(status === 'CANCELLED' ? { error_message: errorMessage ?? 'cancelled by the agent' } : {}),
      });
      if (status !== 'PROCESSING') await this.moveVine(stores, updated);
      if (outputs && updated.vine_id !== null) {
        await finalizeDeployment(stores, { ...updated, vine_id: updated.vine_id }, outputs, at);
      }
      if (status === 'SUCCESS' && updated.job_type === 'DESTROY' && updated.vine_id !== null) {
        await stores.vines.clearComponents(updated.owner_id, updated.vine_id);
      }
      if (status === 'SUCCESS' && updated.job_type === 'DESTROY_WORKER' && updated.target_worker_id !== null) {
        await stores.workers.markDestroyed(updated.owner_id, updated.target_worker_id, at);
        await this.cancelJobsAssignedTo(stores, updated.owner_id, updated.target_worker_id, at);
      }
      await enqueueJobEnd(stores, this.deps, updated);
      await enqueuePlanNeedsApproval(stores, this.deps, updated);
      await enqueueVcsFeedback(stores, this.deps, updated, 'ended');
      const triggered = isTerminalJobStatus(status) ? await afterJobFinished(stores, this.deps, updated, at) : [];
      return { updated, triggered };
    });
    for (const queued of triggered) {
      await announce(this.deps.events, { type: 'job_queued', owner_id: queued.owner_id, job_id: queued.id });
    }
    if (job.status === 'SUCCESS' && job.job_type === 'DESTROY_WORKER' && job.target_worker_id !== null) {
      // A destroyed worker's token stops working at once: here, and on other replicas by the event.
      this.credentials.forget(job.target_worker_id);
      await announce(this.deps.events, {
        type: 'worker_credentials_changed',
        owner_id: job.owner_id,
        worker_id: job.target_worker_id,
      });
    }
    if (job.status !== 'PROCESSING') await this.announceStatus(job);
    return job;
  }

  /** Each update is capped on its own; this caps what they add up to on the job. */
  private requireMetadataWithinCap(merged: JsonObject): void {
    const limit = this.deps.settings.maxExecutionMetadataBytes;
    if (Buffer.byteLength(JSON.stringify(merged), 'utf8') > limit) {
      throw new TooLargeError(
        'metadata_too_large',
        `the job's execution_metadata, merged across its updates, must be at most ${limit} bytes`,
        limit,
      );
    }
  }

  /**
   * The lost-agent sweep: `PROCESSING` jobs of workers silent longer than the lost-job timeout
   * become `FAILED`, and their vines with them. Returns the jobs it failed.
   */
  async sweepLostJobs(): Promise<Job[]> {
    // This replica's queued heartbeats first; other replicas' queued ones are recent by the
    // `HeartbeatBuffer` rule (a heartbeat after a long silence is written at once).
    await this.heartbeats.flush();
    const now = this.deps.clock.now();
    const timeout = this.deps.settings.lostJobTimeoutSeconds;
    const cutoff = isoSecondsBefore(now, timeout);
    const lost = await this.deps.uow.read(systemScope, (stores) => stores.jobs.listLost(cutoff));
    const failed: Job[] = [];
    for (const job of lost) {
      const updated = await this.deps.uow.run(ownerScope(job.owner_id), async (stores) => {
        const current = await stores.jobs.get(job.owner_id, job.id);
        if (current?.status !== 'PROCESSING') return null;
        // The agent may have come back since the search: a heartbeat after the cutoff spares its job.
        const agent = current.claimed_by_worker_id
          ? await stores.workers.get(job.owner_id, current.claimed_by_worker_id)
          : null;
        if (agent?.last_heartbeat && Date.parse(agent.last_heartbeat) >= Date.parse(cutoff)) return null;
        const result = await stores.jobs.update(job.owner_id, job.id, 'PROCESSING', {
          status: transitionJob(current.status, 'agent_lost'),
          finished_at: now.toISOString(),
          error_message: `the agent running this job was lost: no heartbeat from worker ${current.claimed_by_worker_id} for over ${timeout} s`,
        });
        if (result) {
          await this.moveVine(stores, result);
          await this.releaseStateLock(stores, result);
          await enqueueJobEnd(stores, this.deps, result);
          await enqueueVcsFeedback(stores, this.deps, result, 'lost');
          // A lost drift check leaves `unknown` with its reason (a lost deploy triggers nothing).
          await afterJobFinished(stores, this.deps, result, now.toISOString());
        }
        return result;
      });
      if (updated) {
        failed.push(updated);
        await this.announceStatus(updated);
      }
    }
    return failed;
  }

  /**
   * The engine of a lost agent cannot unlock its vine's state; one job runs per vine, so the lock
   * is that engine's, and the next job of the vine would otherwise wait for it forever.
   */
  private async releaseStateLock(stores: Stores, job: Job): Promise<void> {
    if (job.vine_id === null) return;
    const lock = await stores.states.getLock(job.owner_id, job.vine_id);
    if (lock) await stores.states.releaseLock(job.owner_id, job.vine_id, lock.lock_id);
  }

  /**
   * Queued jobs assigned to a destroyed worker could never run, and would hold their vines'
   * queues (FIFO per vine) forever: they are cancelled with the reason.
   */
  private async cancelJobsAssignedTo(stores: Stores, ownerId: string, workerId: string, at: string): Promise<void> {
    const queued = await stores.jobs.list(ownerId, { status: 'QUEUED' });
    for (const job of queued.filter((j) => j.assigned_worker_id === workerId)) {
      const cancelled = await this.applyUpdate(stores, job, {
        status: transitionJob(job.status, 'cancel'),
        finished_at: at,
        error_message: 'cancelled: the agent this job was assigned to was destroyed',
      });
      await enqueueJobEnd(stores, this.deps, cancelled);
      await enqueueVcsFeedback(stores, this.deps, cancelled, 'ended');
    }
  }

  private async find(ownerId: string, id: unknown): Promise<Job> {
    const jobId = requireUuid(id, 'id');
    const job = await this.deps.uow.read(ownerScope(ownerId), (stores) => stores.jobs.get(ownerId, jobId));
    if (!job) throw new NotFoundError('job');
    return job;
  }

  private async requireClaimedBy(stores: Stores, worker: WorkerActor, jobId: string): Promise<Job> {
    const job = await stores.jobs.get(worker.ownerId, jobId);
    if (!job) throw new NotFoundError('job');
    if (job.claimed_by_worker_id !== worker.workerId) {
      throw new ForbiddenError('job_not_claimed_by_worker', 'this job was not claimed by this worker');
    }
    return job;
  }

  private async requireLiveWorker(stores: Stores, ownerId: string, workerId: string) {
    const worker = await stores.workers.get(ownerId, workerId);
    if (!worker) throw new NotFoundError('worker');
    if (worker.destroyed_at !== null) throw new ConflictError('worker_destroyed', 'this worker was destroyed');
    return worker;
  }

  private async checkPlan(
    stores: Stores,
    ownerId: string,
    planJobId: string,
    vineId: string,
    hash: string,
    approvalSetting: ApprovalSetting | null,
  ) {
    // Locked: a decision on the plan (a rejection) made meanwhile is waited for and seen.
    const plan = await stores.jobs.getForUpdate(ownerId, planJobId);
    if (!plan) throw new NotFoundError('plan_job', 'plan_job_not_found', 'plan job not found');
    if (plan.job_type !== 'PLAN' || plan.vine_id !== vineId) {
      throw new ValidationError('plan_job_id is not a PLAN job of this configuration', [
        { path: 'plan_job_id', message: 'must be a PLAN job of the same configuration' },
      ]);
    }
    if (isSpeculativeTrigger(plan.trigger)) {
      const what = isDriftCheck(plan) ? 'a drift check' : "a pull request's plan";
      throw new ConflictError(
        'plan_speculative',
        `this plan is ${what}: speculative plans (drift checks, pull request plans) are never deployed; plan again`,
      );
    }
    if (plan.status !== 'SUCCESS' || !(await stores.planArtifacts.get(ownerId, plan.id))) {
      throw new ConflictError('plan_not_ready', 'the plan job has not succeeded with a plan artifact');
    }
    if ((await stores.jobs.listDeploysOfPlan(ownerId, plan.id)).length > 0) {
      throw new ConflictError('plan_already_applied', 'this plan is already applied or being applied');
    }
    if (plan.config_hash !== hash) {
      throw new ConflictError('plan_stale', 'the configuration changed since this plan was made; plan again');
    }
    checkPlanReviews(plan, approvalSetting);
  }

  /** Best effort: a claimed job whose claim could not be answered becomes FAILED with `message`. */
  private async failUnstartable(worker: WorkerActor, jobId: string, message: string): Promise<void> {
    try {
      const failed = await this.deps.uow.run(ownerScope(worker.ownerId), async (stores) => {
        const current = await stores.jobs.get(worker.ownerId, jobId);
        if (current?.status !== 'PROCESSING') return null;
        const updated = await this.applyUpdate(stores, current, {
          status: transitionJob(current.status, 'report_failed'),
          finished_at: isoNow(this.deps),
          error_message: message,
        });
        await this.moveVine(stores, updated);
        return updated;
      });
      if (failed) await this.announceStatus(failed);
    } catch {
      // The lost-agent sweep and a person's cancel remain; the original error is what the caller sees.
    }
  }

  private async applyUpdate(stores: Stores, job: Job, patch: JobPatch): Promise<Job> {
    const updated = await stores.jobs.update(job.owner_id, job.id, job.status, patch);
    if (!updated) throw new ConflictError('invalid_transition', 'the job changed while it was being updated');
    return updated;
  }

  /** Mirrors a job's end on its vine (DESIGN §3 vine states). */
  private async moveVine(stores: Stores, job: Job): Promise<void> {
    if (job.vine_id === null || job.job_type === 'DESTROY_WORKER' || isSpeculativeTrigger(job.trigger)) return;
    const vine = await stores.vines.get(job.owner_id, job.vine_id);
    if (!vine) return;
    const jobType = job.job_type as VineJobType;
    const at = isoNow(this.deps);
    switch (job.status as Exclude<JobStatus, 'QUEUED' | 'PROCESSING'>) {
      case 'SUCCESS':
        await stores.vines.updateStatus(
          job.owner_id,
          vine.id,
          transitionVine(vine.status, { type: 'job_succeeded', jobType }),
          null,
          at,
        );
        return;
      case 'FAILED':
        await stores.vines.updateStatus(
          job.owner_id,
          vine.id,
          transitionVine(vine.status, { type: 'job_failed' }),
          job.error_message,
          at,
        );
        return;
      case 'CANCELLED':
        await stores.vines.updateStatus(
          job.owner_id,
          vine.id,
          transitionVine(vine.status, { type: 'job_cancelled', restore: job.vine_status_before ?? 'NEW' }),
          null,
          at,
        );
        return;
    }
  }

  private async announceStatus(job: Job): Promise<void> {
    await announce(this.deps.events, {
      type: 'job_status_changed',
      owner_id: job.owner_id,
      job_id: job.id,
      status: job.status,
    });
  }
}

function parseMetadata(value: unknown): JsonObject {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new ValidationError('execution_metadata must be an object', [
      { path: 'execution_metadata', message: 'must be an object' },
    ]);
  }
  if (Buffer.byteLength(JSON.stringify(value)) > MAX_METADATA_BYTES) {
    throw new ValidationError(`execution_metadata must be at most ${MAX_METADATA_BYTES} bytes`, [
      { path: 'execution_metadata', message: 'too large' },
    ]);
  }
  return value as JsonObject;
}

function parseErrorMessage(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') {
    throw new ValidationError('error_message must be a string', [
      { path: 'error_message', message: 'must be a string' },
    ]);
  }
  return value.length > MAX_ERROR_MESSAGE ? `${value.slice(0, MAX_ERROR_MESSAGE)}…` : value;
}

/** The names a job token's `sub` carries: the owner (an organization's name, a person's email), vineyard and vine. */
async function tokenSubjectOf(stores: Stores, job: Job, vineyard: Vineyard | null): Promise<JobTokenSubject> {
  const snapshot = job.config_snapshot.vine;
  const [org, user] = await Promise.all([stores.orgs.get(job.owner_id), stores.users.get(job.owner_id)]);
  return {
    ownerName: org?.name ?? user?.email ?? job.owner_id,
    vineyardName: vineyard?.name ?? job.vineyard_id ?? '',
    vineName: snapshot?.name ?? job.vine_id ?? '',
  };
}
