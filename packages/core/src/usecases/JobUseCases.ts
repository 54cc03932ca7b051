import { requireRunnableSource } from '../tfe/workspaces.js';
import type { HeartbeatBuffer } from './HeartbeatBuffer.js';
import type { UserActor, WorkerActor } from '../domain/actors.js';
import { isOneOf, type JobType, REPORTABLE_JOB_STATUSES, type ReportableJobStatus } from '../domain/enums.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../domain/errors.js';
import { parseExecutionMetadata } from '../domain/jobResults.js';
import { type PageQuery, type PageResult, pageRequest, pageResult } from '../domain/pagination.js';
import { isTerminalJobStatus, type JobEvent } from '../domain/jobStateMachine.js';
import {
  type CloudIdentitySettings,
  type ConfigSnapshot,
  cloudIdentitySettings,
  isSpeculativeTrigger,
  type Job,
  type Vine,
  type Vineyard,
} from '../domain/records.js';
import type { JobTokenSubject, WorkloadIdentityUseCases } from '../workloadIdentity/WorkloadIdentityUseCases.js';
import { requireUuid } from '../domain/validation.js';
import { type VineJobType, transitionVine } from '../domain/vineStateMachine.js';
import { type CreateJobInput, parseErrorMessage, parseJobFilter, parseJobRequest } from '../jobs/jobInput.js';
import { changedMeanwhile, type JobLifecycle } from '../jobs/JobLifecycle.js';
import { sweepLostJobs } from '../jobs/lostAgentSweep.js';
import { refusedEndReport } from '../jobs/windDown.js';
import { issueJobStateToken } from '../auth/jobStateToken.js';
import { type ClaimRegistry, JobRegistryAccess } from '../registry/jobRegistry.js';
import { type StateAccess, stateAccessOf } from '../domain/stateAccess.js';
import { jobForAgent, secretsWithheld, withheldSecretsNote } from '../vcs/forkPullRequests.js';
import { configHash, snapshotOfVine, snapshotOfWorkerTarget } from '../snapshot/configSnapshot.js';
import { snapshotOfPlanNow } from '../jobs/changeSnapshot.js';
import { ownerScope, type Scope, type Stores, visibleOwners } from '../ports/UnitOfWork.js';
import { Access, parseOwnerFilter } from './Access.js';
import { announce, type CoreDeps, isoNow } from './CoreDeps.js';
import { redactSensitiveOutputs } from './finalizeDeployment.js';
import { jobForPeople, type JobSummaryView, type JobView } from './views.js';
import { claimedPolicy, type PolicyToEvaluate } from '../domain/policies.js';
import { policiesForVine } from '../policies/PolicyUseCases.js';
import type { ConfigurationVersionRef } from '../configurationVersions/records.js';
import type { ConfigurationVersionUseCases } from '../configurationVersions/ConfigurationVersionUseCases.js';
import { claimConfigurationVersion, runsConfigurationVersion } from '../configurationVersions/claimVersion.js';
import { withRunOptions } from '../jobs/runOptions.js';
import { endAtClaim, missingFeatures, uploadedVersionIn } from '../configurationVersions/claimUpload.js';
import { checkChange, type PlanlessActions, planlessActions, vineGuardsOf } from '../jobs/deployGate.js';

export type { CreateJobInput } from '../jobs/jobInput.js';

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
  /**
   * The registry of the job's owner (issue 28): a job-scoped token for reads of its modules,
   * providers and provider mirror, and the providers its mirror holds. The agent writes the CLI
   * configuration with them.
   */
  registry: ClaimRegistry;
  /**
   * A PLAN's (and drift check's) and a DESTROY's: the policies that apply to its vine, at their
   * current version (issues 15, 23); the versions are recorded on the job.
   */
  policies: PolicyToEvaluate[];
  /** The vineyard of the job's vine, for `input.trellis.vineyard` of the policies; null without a vine. */
  vineyard: { id: string; name: string } | null;
  /**
   * Issue 23: for a job of a vine connected to a repository, the configuration version of its
   * commit, which the control plane fetched with the connecting person's token: the agent
   * downloads it with its own credentials, checks its sha256 and runs exactly it. No agent ever
   * receives a person's provider token. Null for other jobs.
   */
  configuration_version: ConfigurationVersionRef | null;
  /** `read` for a speculative plan: its state token never writes or locks the state (plan with `-lock=false`). */
  state_access: StateAccess;
}

const END_EVENTS: Readonly<Record<Exclude<ReportableJobStatus, 'PROCESSING'>, JobEvent>> = {
  SUCCESS: 'report_success',
  FAILED: 'report_failed',
  CANCELLED: 'report_cancelled',
};

export class JobUseCases {
  private readonly access: Access;
  private readonly registry: JobRegistryAccess;

  constructor(
    private readonly deps: CoreDeps,
    private readonly lifecycle: JobLifecycle,
    private readonly heartbeats: HeartbeatBuffer,
    private readonly workloadIdentity?: WorkloadIdentityUseCases,
    private readonly configurationVersions?: ConfigurationVersionUseCases,
  ) {
    this.access = new Access(deps);
    this.registry = new JobRegistryAccess(deps);
  }

  /** `POST /api/jobs`: snapshot and hash of the vine, plan checks (DESIGN §3). */
  async create(user: UserActor, input: CreateJobInput): Promise<JobView> {
    const { jobType, vineId, assignedWorkerId, planJobId, targetWorkerId, destroy, runOptions } =
      parseJobRequest(input);
    // A job belongs to its vine's owner (to its target's, for DESTROY_WORKER).
    const queue = (stores: Stores, ownerId: string, vine: Vine | null, snapshot: ConfigSnapshot, plan?: Job) =>
      this.queueCreated(stores, user, {
        ownerId,
        vine,
        snapshot,
        jobType,
        planJobId,
        plan,
        assignedWorkerId,
        targetWorkerId,
      });
    const run = (scope: Scope, work: (stores: Stores) => Promise<Job>) => this.lifecycle.run(scope, work);
    const job =
      jobType === 'DESTROY_WORKER'
        ? await this.access.runLocated(
            user,
            'agents.manage',
            'worker_not_found',
            (stores, ownerId) => stores.workers.get(ownerId, targetWorkerId as string),
            run,
            async (stores, target) => {
              if (assignedWorkerId !== null) await this.requireLiveWorker(stores, target.owner_id, assignedWorkerId);
              const live = await this.requireLiveWorker(stores, target.owner_id, target.id);
              return queue(stores, target.owner_id, null, snapshotOfWorkerTarget(live));
            },
          )
        : await this.access.runLocated(
            user,
            'jobs.run',
            'configuration_not_found',
            (stores, ownerId) => stores.vines.get(ownerId, vineId as string),
            run,
            async (stores, vine) => {
              const ownerId = vine.owner_id;
              if (assignedWorkerId !== null) await this.requireLiveWorker(stores, ownerId, assignedWorkerId);
              // A DEPLOY of a git-driven plan deploys the commit that plan pinned, of a remote run's plan
              // its uploaded configuration (issue 27); its hash compares with the plan's. Read locked
              // once: the deploy gate and the offer to the plan's agent take it from here.
              const plan = planJobId === null ? null : await stores.jobs.getForUpdate(ownerId, planJobId);
              const ofPlan = plan !== null && plan.vine_id === vine.id;
              if (!(ofPlan && plan.config_snapshot.source?.type === 'upload')) requireRunnableSource(vine);
              let snapshot = ofPlan ? snapshotOfPlanNow(vine, plan) : snapshotOfVine(vine);
              // A destroy plan, and the DESTROY that applies one, say so in their snapshot (and hash).
              if (destroy || (jobType === 'DESTROY' && planJobId !== null)) snapshot = { ...snapshot, destroy: true };
              snapshot = withRunOptions(snapshot, runOptions, jobType === 'DEPLOY' && ofPlan ? plan : null);
              return queue(stores, ownerId, vine, snapshot, plan ?? undefined);
            },
          );
    return jobForPeople(job);
  }

  /** The new job queued, past the deploy gate for a change of infrastructure, in `create`'s unit of work. */
  private async queueCreated(
    stores: Stores,
    user: UserActor,
    input: {
      ownerId: string;
      vine: Vine | null;
      snapshot: ConfigSnapshot;
      jobType: JobType;
      planJobId: string | null;
      /** The plan of `planJobId`, read locked in this unit of work. */
      plan?: Job;
      assignedWorkerId: string | null;
      targetWorkerId: string | null;
    },
  ): Promise<Job> {
    const { ownerId, vine, snapshot, jobType, planJobId, plan, assignedWorkerId, targetWorkerId } = input;
    const hash = configHash(snapshot);
    if (vine !== null && (jobType === 'DEPLOY' || jobType === 'DESTROY')) {
      // The deploy gate (issue 23): every change of infrastructure passes it.
      await checkChange(stores, { type: jobType, vine, planJobId, hash, lockedPlan: plan });
    }
    const target = jobType === 'DESTROY_WORKER' ? targetWorkerId : null;
    return this.lifecycle.queue(stores, {
      owner_id: ownerId,
      job_type: jobType,
      vine,
      configuration: { snapshot, hash },
      assigned_worker_id: assignedWorkerId,
      plan_job_id: planJobId,
      plan,
      target_worker_id: target,
      trigger: { type: 'manual' },
      actor: user,
      audit: { target_worker_id: target },
    });
  }

  /** A page of the owner's jobs, newest first, as summaries (`GET /api/jobs`). */
  async list(
    user: UserActor,
    query: { status?: unknown; vineyard_id?: unknown; vine_id?: unknown; org_id?: unknown } & PageQuery = {},
  ): Promise<PageResult<JobSummaryView>> {
    const request = pageRequest(query, this.deps.settings.pageLimits);
    const filter = parseJobFilter(query);
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

  /** What a DEPLOY or DESTROY of the vine without a plan would meet at the deploy gate (issue 23). */
  async planlessActions(user: UserActor, vineId: unknown): Promise<PlanlessActions> {
    const id = requireUuid(vineId, 'configuration_id');
    const { record, scope } = await this.access.locate(user, 'read', 'configuration_not_found', (stores, ownerId) =>
      stores.vines.get(ownerId, id),
    );
    return this.deps.uow.read(scope, async (stores) =>
      planlessActions(await vineGuardsOf(stores, record), record.name),
    );
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
    const job = await this.lifecycle.run(located.scope, async (stores) => {
      const current = await stores.jobs.get(located.record.owner_id, jobId);
      if (!current) throw new NotFoundError('job');
      const ended = await this.lifecycle.end(stores, current, 'cancel', { reason: 'cancelled_by_person', actor: user });
      if (!ended) throw changedMeanwhile();
      return ended;
    });
    return jobForPeople(job);
  }

  /**
   * `POST /api/jobs/claim`: the next job for this worker, or null (`204`). `features`: what the
   * agent says it can run (`AGENT_FEATURES`); a job needing more ends at once (`agent_outdated`).
   */
  async claim(worker: WorkerActor, features: readonly string[] = []): Promise<ClaimedJob | null> {
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
      // A PLAN's and a planless DESTROY's claim carries the vine's policies (the agent checks a
      // destroy on its destroy plan; a destroy plan was checked when planned); which versions it
      // carried is recorded, so a plan lacking a result of one is never deployed (issue 23).
      const checked =
        job.vine_id !== null && (job.job_type === 'PLAN' || (job.job_type === 'DESTROY' && job.plan_job_id === null));
      const policies = checked ? await policiesForVine(stores, job.owner_id, job.vineyard_id) : [];
      if (checked) {
        await stores.jobs.recordClaimedPolicies(job.owner_id, job.id, policies.map(claimedPolicy));
      }
      // A fork's pull request planned without secrets (issue 23): no identity, no configuration version.
      const withheld = secretsWithheld(job);
      if (withheld)
        await stores.logs.append(job.owner_id, job.id, withheldSecretsNote(job), 'SYSTEM', isoNow(this.deps));
      const connection =
        job.vine_id !== null && runsConfigurationVersion(job) ? await stores.vcs.get(job.owner_id, job.vine_id) : null;
      const subject = identity?.kind === 'oidc' && !withheld ? await tokenSubjectOf(stores, job, vineyard) : null;
      // What the answer needs besides, read here rather than in a unit of work of its own each: an
      // uploaded configuration's version (for an agent that can run it) and the owner's registry.
      const forAgent = jobForAgent(job);
      const outdated = missingFeatures(forAgent, features);
      const uploaded =
        outdated === null && forAgent.config_snapshot.source?.type === 'upload'
          ? await uploadedVersionIn(stores, forAgent)
          : null;
      const registry = await this.registry.readForClaim(stores, job.owner_id);
      return {
        connection,
        subject,
        outdated,
        uploaded,
        registry,
        job: forAgent,
        policies,
        vineyard: vineyard ? { id: vineyard.id, name: vineyard.name } : null,
        cloud_identity: identity && !withheld ? cloudIdentitySettings(identity) : null,
        state_access: stateAccessOf(job),
      };
    });
    if (!claimed) return null;
    const { connection, subject, outdated, uploaded, registry: registryRead, ...rest } = claimed;
    await announce(this.deps.events, {
      type: 'job_status_changed',
      owner_id: rest.job.owner_id,
      job_id: rest.job.id,
      status: rest.job.status,
    });
    const { job, cloud_identity } = rest;
    // An agent that would run it as something else never runs it (issue 27); nor a missing upload.
    if (outdated !== null || (uploaded !== null && 'refused' in uploaded)) {
      const reason = outdated !== null ? 'agent_outdated' : 'source_unavailable';
      const message = outdated ?? (uploaded !== null && 'refused' in uploaded ? uploaded.refused : '');
      await endAtClaim(this.lifecycle, this.deps, worker, job, reason, message);
      return null;
    }
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
    let configuration_version: ConfigurationVersionRef | null =
      uploaded !== null && 'ref' in uploaded ? uploaded.ref : null;
    if (connection && this.configurationVersions) {
      configuration_version = await claimConfigurationVersion(
        this.configurationVersions,
        this.lifecycle,
        this.deps,
        worker,
        job,
        connection,
      );
      // The job could not be given its configuration: it ended with the reason; nothing to run.
      if (configuration_version === null) return null;
    }
    const registry = await this.registry.forClaim(job, worker.workerId, registryRead);
    return { ...rest, state_token, identity_token, configuration_version, registry };
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
    const metadata = redactSensitiveOutputs(parseExecutionMetadata(report.execution_metadata));
    const errorMessage = parseErrorMessage(report.error_message);
    return this.lifecycle
      .run(ownerScope(worker.ownerId), async (stores) => {
        const current = await this.requireClaimedBy(stores, worker, jobId);
        if (reported === 'PROCESSING') return this.lifecycle.progress(stores, current, metadata);
        const ended = await this.lifecycle.end(stores, current, END_EVENTS[reported], {
          reason: 'reported',
          actor: worker,
          message: errorMessage,
          metadata,
        });
        if (!ended) throw changedMeanwhile();
        return ended;
      })
      .catch((error) =>
        reported === 'PROCESSING' ? Promise.reject(error) : refusedEndReport(this.deps, worker, jobId, error),
      );
  }

  /**
   * A status report that, when it ends the job, also claims the agent's next job (issue 31,
   * `claim_next`): the slot the job frees takes its next job without a claim request of its own,
   * so a DEPLOY queued as its plan ends and offered to this agent starts at once. The report is
   * committed first and stands alone: a claim that fails after it is answered as none, with the
   * error for the caller to log (the agent claims as usual), so the report's answer is not lost.
   */
  async reportStatusAndClaim(
    worker: WorkerActor,
    id: unknown,
    report: StatusReport,
    features: readonly string[],
  ): Promise<{ job: Job; next: ClaimedJob | null; claimError: unknown }> {
    const job = await this.reportStatus(worker, id, report);
    if (!isTerminalJobStatus(job.status)) return { job, next: null, claimError: null };
    try {
      return { job, next: await this.claim(worker, features), claimError: null };
    } catch (error) {
      return { job, next: null, claimError: error };
    }
  }

  /** The lost-agent sweep (`jobs/lostAgentSweep.ts`): returns the jobs it ended. */
  async sweepLostJobs(): Promise<Job[]> {
    return sweepLostJobs(this.deps, this.lifecycle, this.heartbeats);
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

  /**
   * Best effort: a claimed job whose claim could not be answered ends FAILED with `message`, like
   * every end (its commit status, notification, drift result and audit entry).
   */
  private async failUnstartable(worker: WorkerActor, jobId: string, message: string): Promise<void> {
    try {
      await this.lifecycle.run(ownerScope(worker.ownerId), async (stores) => {
        const current = await stores.jobs.get(worker.ownerId, jobId);
        if (current?.status !== 'PROCESSING') return null;
        return this.lifecycle.end(stores, current, 'start_failed', {
          reason: 'start_failed',
          actor: 'system',
          message,
        });
      });
    } catch {
      // The lost-agent sweep and a person's cancel remain; the original error is what the caller sees.
    }
  }
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
