import type { UserActor } from '../domain/actors.js';
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors.js';
import type { Vine, Vineyard } from '../domain/records.js';
import type { OrgAction } from '../domain/roles.js';
import type { Scope, Stores } from '../ports/UnitOfWork.js';
import type { VineSettingsPatch } from '../ports/VineStore.js';
import { recordAudit } from '../usecases/audit.js';
import { type CoreDeps, isoNow } from '../usecases/CoreDeps.js';
import { deleteStateArtifacts } from '../usecases/stateVersionWriter.js';
import { DEFAULT_PROJECT_NAME, vineIdOf, vineyardIdOf } from './names.js';
import { type TfeOrganization, TfeOrganizations } from './TfeOrganizations.js';
import {
  auditDetails,
  parseTags,
  parseWorkspaceInput,
  type TfeWorkspace,
  type TfeWorkspaceInput,
} from './workspaces.js';
import { workspaceSettingsOf } from './workspaceSettings.js';
import type { VineEditUseCases } from '../vineEdits/VineEditUseCases.js';

/** A workspace named as the protocol names one: by id, or by organization and name. */
export type WorkspaceRef = { id: string } | { organization: string; name: string };

export interface WorkspaceListQuery {
  /** `search[name]`: names containing it. */
  name?: string;
  /** `search[tags]`: comma-separated tags the workspace must all have. */
  tags?: string;
  /** `filter[project][id]`. */
  projectId?: string;
}

/**
 * Workspaces of the Terraform Cloud protocol (issue 26): a workspace is a vine, a project a
 * vineyard (a `default` one per owner holds workspaces made without a project). Reading needs
 * `viewer`; creating, changing and deleting need what vines need (`vineyards.manage`).
 */
/** How many of a workspace's newest configuration versions are looked at for its current (non-provisional) one. */
const CURRENT_VERSION_LOOKBACK = 20;

export class TfeWorkspaceUseCases {
  readonly orgs: TfeOrganizations;

  constructor(
    private readonly deps: CoreDeps,
    /** Deletes a vine that has run jobs as `trellis configs delete` does (its history kept for the retention). */
    private readonly vineEdits?: Pick<VineEditUseCases, 'delete'>,
  ) {
    this.orgs = new TfeOrganizations(deps);
  }

  /** `GET /organizations/:name` and its entitlement set. */
  async organization(actor: UserActor, name: unknown): Promise<TfeOrganization> {
    return this.orgs.resolve(actor, name, 'read');
  }

  async list(actor: UserActor, organization: unknown, query: WorkspaceListQuery): Promise<TfeWorkspace[]> {
    const org = await this.orgs.resolve(actor, organization, 'read');
    const tags = query.tags
      ? parseTags(
          query.tags.split(',').map((tag) => tag.trim()),
          'search[tags]',
        )
      : [];
    const vineyardId = query.projectId === undefined ? null : vineyardIdOf(query.projectId);
    return this.deps.uow.read(org.scope, async (stores) => {
      const vines = await stores.vines.list(org.ownerId);
      const matching = vines.filter(
        (vine) =>
          (!query.name || vine.name.includes(query.name)) &&
          tags.every((tag) => vine.tags.includes(tag)) &&
          (query.projectId === undefined || vine.vineyard_id === vineyardId),
      );
      return Promise.all(matching.map((vine) => this.workspaceOf(stores, vine, org.name)));
    });
  }

  async read(actor: UserActor, ref: WorkspaceRef): Promise<TfeWorkspace> {
    return this.readLocated(actor, ref, 'read', (stores, vine, organization) =>
      this.workspaceOf(stores, vine, organization),
    );
  }

  /** Makes a vine whose configuration lives with the CLI (an inline source of no files). */
  async create(actor: UserActor, organization: unknown, input: TfeWorkspaceInput): Promise<TfeWorkspace> {
    const org = await this.orgs.resolve(actor, organization, 'vineyards.manage');
    const parsed = parseWorkspaceInput(input);
    if (parsed.name === undefined) throw nameRequired();
    const name = parsed.name;
    return this.deps.uow.run(org.scope, async (stores) => {
      const vineyard = await this.projectFor(stores, actor, org, input.project_id);
      const now = isoNow(this.deps);
      const vine = await stores.vines.create({
        id: this.deps.random.uuid(),
        owner_id: org.ownerId,
        vineyard_id: vineyard.id,
        name,
        project_name: name,
        cloud_identity_id: null,
        source: { type: 'inline', files: {} },
        variables: {},
        engine: { name: 'tofu', version: null },
        status: 'NEW',
        status_message: null,
        drift_detection: null,
        next_drift_check_at: null,
        drift: null,
        triggers: { after: [] },
        approval: null,
        tags: parsed.tags ?? [],
        terraform_version: parsed.terraform_version ?? 'latest',
        execution_mode: parsed.execution_mode ?? 'remote',
        workspace_settings: workspaceSettingsOf(parsed.settings),
        created_at: now,
        updated_at: now,
      });
      await recordAudit(stores, this.deps, actor, {
        action: 'vine.create',
        target: { type: 'vine', id: vine.id },
        owner_id: org.ownerId,
        details: { name, vineyard_id: vineyard.id, via: 'terraform-cloud', tags: vine.tags.join(',') },
      });
      return this.workspaceOf(stores, vine, org.name);
    });
  }

  async update(actor: UserActor, ref: WorkspaceRef, input: TfeWorkspaceInput): Promise<TfeWorkspace> {
    const parsed = parseWorkspaceInput(input);
    return this.change(actor, ref, 'vineyards.manage', 'vine.update', async (_stores, vine) => {
      const { settings, ...fields } = parsed;
      const patch: VineSettingsPatch = { ...fields };
      if (patch.name !== undefined && patch.name === vine.name) delete patch.name;
      if (settings) patch.workspace_settings = { ...vine.workspace_settings, ...settings };
      return { patch, details: { ...fields, ...(settings ?? {}), via: 'terraform-cloud' } };
    });
  }

  async addTags(actor: UserActor, ref: WorkspaceRef, tags: unknown): Promise<TfeWorkspace> {
    const added = parseTags(tags);
    return this.change(actor, ref, 'vineyards.manage', 'vine.update', async (_stores, vine) => ({
      patch: { tags: [...new Set([...vine.tags, ...added])].sort() },
      details: { added_tags: added },
    }));
  }

  async removeTags(actor: UserActor, ref: WorkspaceRef, tags: unknown): Promise<TfeWorkspace> {
    const removed = parseTags(tags);
    return this.change(actor, ref, 'vineyards.manage', 'vine.update', async (_stores, vine) => ({
      patch: { tags: vine.tags.filter((tag) => !removed.includes(tag)) },
      details: { removed_tags: removed },
    }));
  }

  /**
   * Deletes a workspace. One that never ran a job goes with its state history; one that has is
   * deleted as `trellis configs delete` deletes a vine (refused while a job is queued or running;
   * its state and jobs kept for the deleted-vine retention), a plain delete being a forced one.
   * `safe`: refused while its state is locked or manages resources (`409`).
   */
  async delete(actor: UserActor, ref: WorkspaceRef, options: { safe: boolean; resources?: number }): Promise<void> {
    const { vine, scope } = await this.locate(actor, ref, 'vineyards.manage');
    const ranJobs = await this.deps.uow.read(scope, async (stores) => {
      const jobs = await stores.jobs.list(vine.owner_id, { vine_id: vine.id });
      return jobs.length > 0;
    });
    if (ranJobs) {
      if (!this.vineEdits) {
        throw new ConflictError(
          'configuration_has_jobs',
          'this configuration has run Trellis jobs: delete it in Trellis',
        );
      }
      await this.vineEdits.delete(actor, vine.id, { force: !options.safe });
      return;
    }
    const keys = await this.deps.uow.run(scope, async (stores) => {
      if (options.safe) {
        if (await stores.states.getLock(vine.owner_id, vine.id)) {
          throw new ConflictError('workspace_not_safe_to_delete', 'the workspace is locked');
        }
        if ((options.resources ?? 0) > 0) {
          throw new ConflictError('workspace_not_safe_to_delete', 'the workspace still manages resources');
        }
      }
      const deleted = await stores.vines.delete(vine.owner_id, vine.id);
      await recordAudit(stores, this.deps, actor, {
        action: 'vine.delete',
        target: { type: 'vine', id: vine.id },
        owner_id: vine.owner_id,
        details: { name: vine.name, via: 'terraform-cloud', safe: options.safe },
      });
      return deleted;
    });
    await deleteStateArtifacts(this.deps, keys);
  }

  /** `GET /organizations/:name/projects`: the owner's vineyards. */
  async projects(
    actor: UserActor,
    organization: unknown,
    name?: string,
  ): Promise<{ org: string; vineyards: Vineyard[] }> {
    const org = await this.orgs.resolve(actor, organization, 'read');
    const vineyards = await this.deps.uow.read(org.scope, (stores) => stores.vineyards.list(org.ownerId));
    return { org: org.name, vineyards: vineyards.filter((vineyard) => name === undefined || vineyard.name === name) };
  }

  /** `POST /organizations/:name/projects`: a vineyard (in an organization: admins). */
  async createProject(
    actor: UserActor,
    organization: unknown,
    name: unknown,
  ): Promise<{ org: string; vineyard: Vineyard }> {
    const org = await this.orgs.resolve(actor, organization, 'vineyards.manage');
    const parsed = parseWorkspaceInput({ name }).name;
    if (parsed === undefined) throw nameRequired();
    const vineyard = await this.deps.uow.run(org.scope, async (stores) => {
      const created = await stores.vineyards.create({
        id: this.deps.random.uuid(),
        owner_id: org.ownerId,
        name: parsed,
        created_at: isoNow(this.deps),
      });
      await recordAudit(stores, this.deps, actor, {
        action: 'vineyard.create',
        target: { type: 'vineyard', id: created.id },
        owner_id: org.ownerId,
        details: { name: parsed, via: 'terraform-cloud' },
      });
      return created;
    });
    return { org: org.name, vineyard };
  }

  /** The vine a reference names and the scope to act on it in, `action` authorized. */
  async locate(actor: UserActor, ref: WorkspaceRef, action: OrgAction): Promise<{ vine: Vine; scope: Scope }> {
    if ('id' in ref) {
      const vineId = vineIdOf(ref.id);
      if (vineId === null) throw new NotFoundError('workspace');
      const { record, scope } = await this.orgs.locate(actor, action, 'configuration_not_found', (stores, ownerId) =>
        stores.vines.get(ownerId, vineId),
      );
      return { vine: record, scope };
    }
    const org = await this.orgs.resolve(actor, ref.organization, action);
    const vine = await this.deps.uow.read(org.scope, (stores) => stores.vines.findByName(org.ownerId, ref.name));
    if (!vine) throw new NotFoundError('workspace');
    return { vine, scope: org.scope };
  }

  /**
   * `view` of the vine a reference names, `action` authorized, read in the unit of work that finds
   * the vine: what the CLI polls (a workspace, its runs) costs one unit of work, not two.
   * `organization`: the owner's name when the reference gave it.
   */
  async readLocated<R>(
    actor: UserActor,
    ref: WorkspaceRef,
    action: OrgAction,
    view: (stores: Stores, vine: Vine, organization: string | undefined) => Promise<R>,
  ): Promise<R> {
    if ('id' in ref) {
      const vineId = vineIdOf(ref.id);
      if (vineId === null) throw new NotFoundError('workspace');
      return this.orgs.access.readLocated(
        actor,
        action,
        'configuration_not_found',
        (stores, ownerId) => stores.vines.get(ownerId, vineId),
        (stores, vine) => view(stores, vine, undefined),
      );
    }
    const org = await this.orgs.resolve(actor, ref.organization, action);
    return this.deps.uow.read(org.scope, async (stores) => {
      const vine = await stores.vines.findByName(org.ownerId, ref.name);
      if (!vine) throw new NotFoundError('workspace');
      return view(stores, vine, org.name);
    });
  }

  async workspaceOf(stores: Stores, vine: Vine, organization?: string): Promise<TfeWorkspace> {
    const [name, vineyard, lock, current, versions] = await Promise.all([
      organization ?? this.orgs.nameOf(stores, vine.owner_id),
      stores.vineyards.get(vine.owner_id, vine.vineyard_id),
      stores.states.getLock(vine.owner_id, vine.id),
      stores.states.latest(vine.owner_id, vine.id),
      stores.configurationVersions.listForVine(vine.owner_id, vine.id, CURRENT_VERSION_LOOKBACK),
    ]);
    const currentConfigurationVersionId = versions.find((version) => !version.provisional)?.id ?? null;
    return { vine, organization: name, vineyard, lock, current, currentConfigurationVersionId };
  }

  private async change(
    actor: UserActor,
    ref: WorkspaceRef,
    action: OrgAction,
    audit: 'vine.update',
    plan: (stores: Stores, vine: Vine) => Promise<{ patch: VineSettingsPatch; details: object }>,
  ): Promise<TfeWorkspace> {
    const { vine, scope } = await this.locate(actor, ref, action);
    return this.deps.uow.run(scope, async (stores) => {
      const current = await stores.vines.get(vine.owner_id, vine.id);
      if (!current) throw new NotFoundError('workspace');
      const { patch, details } = await plan(stores, current);
      const updated = await stores.vines.updateSettings(vine.owner_id, vine.id, patch, isoNow(this.deps));
      await recordAudit(stores, this.deps, actor, {
        action: audit,
        target: { type: 'vine', id: vine.id },
        owner_id: vine.owner_id,
        details: auditDetails(details),
      });
      return this.workspaceOf(stores, updated);
    });
  }

  /** The project a new workspace goes in: the one named, else the owner's `default` vineyard (made on first use). */
  private async projectFor(
    stores: Stores,
    actor: UserActor,
    org: TfeOrganization,
    project: unknown,
  ): Promise<Vineyard> {
    if (project !== undefined && project !== null) {
      const vineyardId = vineyardIdOf(project);
      const vineyard = vineyardId === null ? null : await stores.vineyards.get(org.ownerId, vineyardId);
      if (!vineyard) throw new NotFoundError('project');
      return vineyard;
    }
    const existing = (await stores.vineyards.list(org.ownerId)).find(
      (vineyard) => vineyard.name === DEFAULT_PROJECT_NAME,
    );
    if (existing) return existing;
    const vineyard = await stores.vineyards.create({
      id: this.deps.random.uuid(),
      owner_id: org.ownerId,
      name: DEFAULT_PROJECT_NAME,
      created_at: isoNow(this.deps),
    });
    await recordAudit(stores, this.deps, actor, {
      action: 'vineyard.create_default',
      target: { type: 'vineyard', id: vineyard.id },
      owner_id: org.ownerId,
      details: { name: DEFAULT_PROJECT_NAME },
    });
    return vineyard;
  }
}

function nameRequired(): ValidationError {
  return new ValidationError('name is required', [{ path: 'name', message: 'required' }]);
}
