import type { UserActor } from '../../domain/actors.js';
import { ConflictError, NotFoundError } from '../../domain/errors.js';
import type { ConfigSnapshot, Job, Vine } from '../../domain/records.js';
import { planActions, planFactsOf } from '../../jobs/deployGate.js';
import type { JobLifecycle } from '../../jobs/JobLifecycle.js';
import { changedMeanwhile } from '../../jobs/JobLifecycle.js';
import type { Membership } from '../../ports/OrgStore.js';
import type { Scope, Stores } from '../../ports/UnitOfWork.js';
import { configHash, snapshotOfVine } from '../../snapshot/configSnapshot.js';
import { mayAct } from '../../usecases/Access.js';
import { recordAudit } from '../../usecases/audit.js';
import { type CoreDeps, isoNow } from '../../usecases/CoreDeps.js';
import type { TfeWorkspaceUseCases } from '../TfeWorkspaceUseCases.js';
import { planJobIdOf, runId, type TfeRun, tfeConfigurationVersionIdOf } from './records.js';
import { type ApplyOutcome, applyRun } from './runApply.js';
import { parseRunInput, runOptionsOf, type TfeRunInput } from './runInput.js';
import {
  type RunActions,
  type RunFacts,
  runActions,
  runHasChanges,
  runStatus,
  runStatusTimestamps,
  type TfeRunStatus,
} from './runStatus.js';

/** What the caller may do with runs of the owner (`permissions` of a run). */
export interface RunPermissions {
  'can-apply': boolean;
  'can-cancel': boolean;
  'can-discard': boolean;
  'can-force-cancel': boolean;
  'can-force-execute': boolean;
  'can-override-policy-check': boolean;
}

/** A run as the protocol's answers need it. */
export interface TfeRunView {
  run: TfeRun;
  plan: Job;
  /** The job applying its plan, if any. */
  apply: Job | null;
  vine: Vine;
  organization: string;
  status: TfeRunStatus;
  hasChanges: boolean;
  actions: RunActions;
  permissions: RunPermissions;
  timestamps: Record<string, string>;
}

/**
 * Remote runs of the stock CLI (issue 27). A run is a PLAN job of an uploaded configuration
 * version, queued through the job lifecycle (`trigger: cli`, its creator the person behind the
 * token), so it shows in `trellis jobs`, on the web, in notifications and in the audit log; its
 * apply is a DEPLOY (or DESTROY) of that plan through the deploy gate of `trellis deploy --plan`.
 * Who may: what `trellis plan` and `trellis deploy` need (`jobs.run`); reading needs `read`.
 */
export class TfeRunUseCases {
  constructor(
    private readonly deps: CoreDeps,
    private readonly lifecycle: JobLifecycle,
    private readonly workspaces: TfeWorkspaceUseCases,
  ) {}

  /** `POST /runs`: queues the PLAN of the configuration version. */
  async create(actor: UserActor, input: TfeRunInput): Promise<TfeRunView> {
    const parsed = parseRunInput(input.attributes);
    if (typeof input.workspace_id !== 'string') throw new NotFoundError('workspace');
    const { vine, scope } = await this.workspaces.locate(actor, { id: input.workspace_id }, 'jobs.run');
    const versionId = tfeConfigurationVersionIdOf(input.configuration_version_id);
    const planJobId = await this.lifecycle.run(scope, async (stores) => {
      const current = await stores.vines.get(vine.owner_id, vine.id);
      if (!current) throw new NotFoundError('workspace');
      // Without one, the workspace's latest configuration version, as HCP Terraform does.
      const version =
        input.configuration_version_id === undefined || input.configuration_version_id === null
          ? ((await stores.configurationVersions.listForVine(vine.owner_id, current.id, 1))[0] ?? null)
          : versionId === null
            ? null
            : await stores.configurationVersions.get(vine.owner_id, versionId);
      if (!version || version.vine_id !== current.id) throw new NotFoundError('configuration_version');
      if (version.status !== 'uploaded') {
        throw new ConflictError(
          'run_configuration_not_uploaded',
          `the configuration version is ${version.status}${version.error_message ? ` (${version.error_message})` : ''}: upload it first`,
        );
      }
      const settings = current.workspace_settings;
      if (parsed.is_destroy && !settings.allow_destroy_plan) {
        throw new ConflictError('destroy_plan_not_allowed', "this workspace's allow-destroy-plan is off");
      }
      // A speculative configuration version (`tofu plan`) makes a plan-only run.
      const speculative = (version as { speculative?: unknown }).speculative === true;
      const vineNow = snapshotOfVine(current);
      const runOptions = runOptionsOf(parsed);
      const snapshot: ConfigSnapshot = {
        ...vineNow,
        source: {
          type: 'upload',
          configuration_version_id: version.id,
          path: settings.working_directory === '' ? null : settings.working_directory,
        },
        variables: { ...vineNow.variables, ...parsed.variables },
        ...(runOptions !== undefined ? { run_options: runOptions } : {}),
        ...(parsed.is_destroy ? { destroy: true as const } : {}),
      };
      const plan = await this.lifecycle.queue(stores, {
        owner_id: current.owner_id,
        job_type: 'PLAN',
        vine: current,
        configuration: { snapshot, hash: configHash(snapshot) },
        trigger: { type: 'cli' },
        actor,
        audit: { via: 'terraform-cloud', configuration_version_id: version.id, destroy: parsed.is_destroy },
      });
      const at = isoNow(this.deps);
      await stores.tfeRuns.create({
        plan_job_id: plan.id,
        owner_id: plan.owner_id,
        vine_id: current.id,
        configuration_version_id: version.id,
        message: parsed.message,
        is_destroy: parsed.is_destroy,
        auto_apply: parsed.auto_apply ?? settings.auto_apply,
        plan_only: parsed.plan_only || speculative,
        save_plan: parsed.save_plan,
        refresh: parsed.refresh,
        refresh_only: parsed.refresh_only,
        target_addrs: parsed.target_addrs,
        replace_addrs: parsed.replace_addrs,
        variable_keys: Object.keys(parsed.variables).sort(),
        confirmed_at: null,
        confirmed_by: null,
        apply_job_id: null,
        discarded_at: null,
        discarded_by: null,
        created_by: actor.userId,
        created_at: at,
      });
      return plan.id;
    });
    return this.read(actor, runId(planJobId));
  }

  /** `GET /runs/:id`. */
  async read(actor: UserActor, id: unknown): Promise<TfeRunView> {
    const planJobId = planJobIdOf(id);
    if (planJobId === null) throw new NotFoundError('run');
    try {
      return await this.workspaces.orgs.access.readLocated(
        actor,
        'read',
        'job_not_found',
        (stores, ownerId) => stores.tfeRuns.get(ownerId, planJobId),
        (stores, run, memberships) => this.viewOf(stores, actor, memberships, run),
      );
    } catch (error) {
      if (error instanceof NotFoundError) throw new NotFoundError('run');
      throw error;
    }
  }

  /** `GET /workspaces/:id/runs`: newest first. */
  async listOfWorkspace(actor: UserActor, workspaceId: unknown): Promise<TfeRunView[]> {
    if (typeof workspaceId !== 'string') throw new NotFoundError('workspace');
    const memberships = await this.workspaces.orgs.access.memberships(actor);
    return this.workspaces.readLocated(actor, { id: workspaceId }, 'read', async (stores, vine) => {
      const runs = await stores.tfeRuns.listByVine(vine.owner_id, vine.id);
      return Promise.all(runs.map((run) => this.viewOf(stores, actor, memberships, run)));
    });
  }

  /** `GET /organizations/:org/runs`: newest first. */
  async listOfOrganization(actor: UserActor, organization: unknown): Promise<TfeRunView[]> {
    const org = await this.workspaces.orgs.resolve(actor, organization, 'read');
    const memberships = await this.workspaces.orgs.access.memberships(actor);
    return this.deps.uow.read(org.scope, async (stores) => {
      const runs = await stores.tfeRuns.listByOwner(org.ownerId);
      return Promise.all(runs.map((run) => this.viewOf(stores, actor, memberships, run)));
    });
  }

  /** `POST /runs/:id/actions/apply`: the DEPLOY (DESTROY) of its plan, or a yes waiting for the approval. */
  async apply(actor: UserActor, id: unknown): Promise<ApplyOutcome> {
    const { run, scope } = await this.locate(actor, id, 'jobs.run');
    return this.lifecycle.run(scope, async (stores) => {
      const current = await stores.tfeRuns.get(run.owner_id, run.plan_job_id);
      if (!current) throw new NotFoundError('run');
      return applyRun(stores, this.deps, this.lifecycle, current, actor);
    });
  }

  /** `POST /runs/:id/actions/discard`: its plan is never applied (recorded, audited). */
  async discard(actor: UserActor, id: unknown, comment: unknown): Promise<void> {
    const { run, scope } = await this.locate(actor, id, 'jobs.run');
    await this.deps.uow.run(scope, async (stores) => {
      // Locked: an apply queued meanwhile is waited for, and seen below.
      const plan = await stores.jobs.getForUpdate(run.owner_id, run.plan_job_id);
      const current = await stores.tfeRuns.get(run.owner_id, run.plan_job_id);
      if (!plan || !current) throw new NotFoundError('run');
      const deploys = await stores.jobs.listDeploysOfPlan(run.owner_id, plan.id);
      if (plan.status !== 'SUCCESS' || deploys.length > 0 || current.discarded_at !== null) {
        throw new ConflictError(
          'run_not_discardable',
          current.discarded_at !== null
            ? 'the run was already discarded'
            : deploys.length > 0
              ? 'the run is already being applied or applied'
              : `the run's plan has not succeeded (it is ${plan.status})`,
        );
      }
      if (!(await stores.tfeRuns.discard(run.owner_id, plan.id, isoNow(this.deps), actor.userId))) {
        throw new ConflictError('run_not_discardable', 'the run was already discarded');
      }
      await recordAudit(stores, this.deps, actor, {
        action: 'run.discard',
        target: { type: 'job', id: plan.id },
        owner_id: run.owner_id,
        details: {
          vine_id: run.vine_id,
          run_id: runId(plan.id),
          comment: typeof comment === 'string' ? comment.slice(0, 2000) : null,
        },
      });
    });
  }

  /**
   * `POST /runs/:id/actions/cancel` (and `force-cancel`): cancels the queued or running plan, or
   * the queued or running apply, as `trellis jobs cancel` does (at once; the agent winds it down).
   */
  async cancel(actor: UserActor, id: unknown): Promise<Job> {
    const { run, scope } = await this.locate(actor, id, 'jobs.run');
    return this.lifecycle.run(scope, async (stores) => {
      const plan = await stores.jobs.get(run.owner_id, run.plan_job_id);
      if (!plan) throw new NotFoundError('run');
      const apply = await this.applyOf(stores, run, await stores.jobs.listDeploysOfPlan(run.owner_id, plan.id));
      const active = [apply, plan].find((job) => job?.status === 'QUEUED' || job?.status === 'PROCESSING');
      if (!active) {
        throw new ConflictError('run_not_cancelable', 'the run has no queued or running plan or apply to cancel');
      }
      const ended = await this.lifecycle.end(stores, active, 'cancel', { reason: 'cancelled_by_person', actor });
      if (!ended) throw changedMeanwhile();
      return ended;
    });
  }

  private async locate(
    actor: UserActor,
    id: unknown,
    action: 'read' | 'jobs.run',
  ): Promise<{ run: TfeRun; scope: Scope; memberships: Membership[] }> {
    const planJobId = planJobIdOf(id);
    if (planJobId === null) throw new NotFoundError('run');
    try {
      const { record, scope, memberships } = await this.workspaces.orgs.locate(
        actor,
        action,
        'job_not_found',
        (stores, ownerId) => stores.tfeRuns.get(ownerId, planJobId),
      );
      return { run: record, scope, memberships };
    } catch (error) {
      if (error instanceof NotFoundError) throw new NotFoundError('run');
      throw error;
    }
  }

  /** The job applying the run's plan: one of `deploys` (those holding the plan now), else the one the run last had. */
  private async applyOf(stores: Stores, run: TfeRun, deploys: readonly Job[]): Promise<Job | null> {
    if (deploys[0]) return deploys[0];
    return run.apply_job_id === null ? null : stores.jobs.get(run.owner_id, run.apply_job_id);
  }

  private async viewOf(
    stores: Stores,
    actor: UserActor,
    memberships: Parameters<typeof mayAct>[1],
    run: TfeRun,
  ): Promise<TfeRunView> {
    const [plan, vine, deploys] = await Promise.all([
      stores.jobs.get(run.owner_id, run.plan_job_id),
      stores.vines.get(run.owner_id, run.vine_id),
      stores.jobs.listDeploysOfPlan(run.owner_id, run.plan_job_id),
    ]);
    if (!plan || !vine) throw new NotFoundError('run');
    const apply = await this.applyOf(stores, run, deploys);
    const may = (action: Parameters<typeof mayAct>[3]) => mayAct(actor, memberships, run.owner_id, action);
    const facts = await planFactsOf(
      stores,
      plan,
      actor,
      { run: may('jobs.run'), approve: may('plans.approve'), override: may('plans.override') },
      { vine, deploys },
    );
    const runFacts: RunFacts = {
      run,
      plan,
      apply,
      approvalRequired: vine.approval?.required === true,
      applyAction: facts === null ? null : (planActions(facts)?.apply ?? null),
    };
    const status = runStatus(runFacts);
    const operate = may('jobs.run');
    return {
      run,
      plan,
      apply,
      vine,
      organization: await this.workspaces.orgs.nameOf(stores, run.owner_id),
      status,
      hasChanges: runHasChanges(plan),
      actions: runActions(runFacts, status),
      permissions: {
        'can-apply': operate,
        'can-cancel': operate,
        'can-discard': operate,
        'can-force-cancel': operate,
        'can-force-execute': false,
        'can-override-policy-check': may('plans.override'),
      },
      timestamps: runStatusTimestamps(runFacts, status),
    };
  }
}
