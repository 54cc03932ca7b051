import type { UserActor } from '../domain/actors.js';
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors.js';
import type { Vine } from '../domain/records.js';
import { isUuid, requireName, requireUuid } from '../domain/validation.js';
import { type Stores, systemScope } from '../ports/UnitOfWork.js';
import type { VineSettingsPatch } from '../ports/VineStore.js';
import { configHash, snapshotOfVine } from '../snapshot/configSnapshot.js';
import { Access } from '../usecases/Access.js';
import { recordAudit } from '../usecases/audit.js';
import { type CoreDeps, isoNow } from '../usecases/CoreDeps.js';
import type { DriftUseCases, VineSettingsInput } from '../drift/DriftUseCases.js';
import { deleteStateArtifacts } from '../usecases/stateVersionWriter.js';
import { type VineView, type VineyardView, vineForPeople } from '../usecases/views.js';
import { cloudIdentityFor } from './cloudIdentity.js';
import { applyVariableChanges, EDIT_FIELDS, type EditVineInput, parseVineEdit } from './editInput.js';
import { managedResourceCount } from './managedResources.js';

/** Deleted vines whose state one retention pass purges (the rest wait for the next pass). */
export const PURGE_BATCH = 100;

/** What `DELETE /api/cli/configurations/{name}` answers. */
export interface DeletedVine {
  id: string;
  name: string;
  /** When its state versions go (the retention setting); null: kept. */
  state_kept_until: string | null;
}

/**
 * Changing and deleting vines and vineyards (issue 25), and where the stock CLI's runs go
 * (`execution_mode`, issue 27: it does not change the config hash). A change of source, variables, engine or
 * cloud identity changes the vine's config hash, so a plan made before it is stale
 * (`plan_stale`). A vine that still manages resources is destroyed first, or deleted with
 * `force`; a deleted vine's state versions stay for `deletedVineRetentionDays`. A vineyard is
 * deleted only when it holds no vines. In an organization all of it needs `vineyards.manage`
 * (admins and owners).
 */
export class VineEditUseCases {
  private readonly access: Access;

  constructor(
    private readonly deps: CoreDeps,
    private readonly drift: DriftUseCases,
  ) {
    this.access = new Access(deps);
  }

  /**
   * `PATCH /api/cli/configurations/{name}`: the fields present change, the others stay. The
   * settings (drift detection, run triggers, approval) are the drift use case's.
   */
  async update(user: UserActor, nameOrId: unknown, input: EditVineInput & VineSettingsInput): Promise<VineView> {
    const edit = parseVineEdit(input);
    const hasSettings = [input.drift_detection, input.triggers, input.approval].some((value) => value !== undefined);
    const hasEdits = EDIT_FIELDS.some((field) => input[field] !== undefined);
    if (!hasEdits) return this.drift.configure(user, nameOrId, input);
    const { record, scope } = await this.access.locate(
      user,
      'vineyards.manage',
      'configuration_not_found',
      (stores, ownerId) => findVine(stores, ownerId, nameOrId),
    );
    if (hasSettings) {
      await this.drift.configure(user, record.id, {
        drift_detection: input.drift_detection,
        triggers: input.triggers,
        approval: input.approval,
      });
    }
    return this.deps.uow.run(scope, async (stores) => {
      const vine = await stores.vines.get(record.owner_id, record.id);
      if (!vine) throw new NotFoundError('configuration');
      const patch: VineSettingsPatch = {};
      const changed: string[] = [];
      if (edit.name !== undefined && edit.name !== vine.name) {
        patch.name = edit.name;
        changed.push('name');
      }
      if (edit.project_name !== undefined && edit.project_name !== vine.project_name) {
        patch.project_name = edit.project_name;
        changed.push('project_name');
      }
      if (edit.source !== undefined) {
        patch.source = edit.source;
        changed.push('source');
      }
      if (edit.variables !== undefined) {
        patch.variables = applyVariableChanges(vine.variables, edit.variables);
        changed.push('variables');
      }
      if (edit.engine !== undefined) {
        patch.engine = edit.engine;
        changed.push('engine');
      }
      if (edit.cloud_identity !== undefined) {
        const identity = await cloudIdentityFor(stores, this.deps, vine.owner_id, edit.cloud_identity);
        patch.cloud_identity_id = identity?.id ?? null;
        changed.push('cloud_identity');
      }
      if (edit.execution_mode !== undefined && edit.execution_mode !== vine.execution_mode) {
        patch.execution_mode = edit.execution_mode;
        changed.push('execution_mode');
      }
      if (edit.tags !== undefined && edit.tags.join(',') !== vine.tags.join(',')) {
        patch.tags = edit.tags;
        changed.push('tags');
      }
      const updated = await stores.vines.updateSettings(vine.owner_id, vine.id, patch, isoNow(this.deps));
      const before = configHash(snapshotOfVine(vine));
      const after = configHash(snapshotOfVine(updated));
      const variables = edit.variables ?? {};
      const setNames = Object.keys(variables).filter((key) => variables[key] !== null);
      const unsetNames = Object.keys(variables).filter((key) => variables[key] === null);
      await recordAudit(stores, this.deps, user, {
        action: 'vine.update',
        target: { type: 'vine', id: vine.id },
        owner_id: vine.owner_id,
        details: {
          name: updated.name,
          changed: changed.join(','),
          ...(patch.name !== undefined ? { previous_name: vine.name } : {}),
          ...(patch.execution_mode !== undefined
            ? { execution_mode: patch.execution_mode, previous_execution_mode: vine.execution_mode }
            : {}),
          ...(patch.tags !== undefined ? { tags: patch.tags.join(','), previous_tags: vine.tags.join(',') } : {}),
          ...(setNames.length > 0 ? { variables_set: setNames.join(',') } : {}),
          ...(unsetNames.length > 0 ? { variables_unset: unsetNames.join(',') } : {}),
          config_hash_changed: before !== after,
        },
      });
      return viewOf(stores, updated);
    });
  }

  /**
   * `DELETE /api/cli/configurations/{name}`: refused while a job is queued or running
   * (`configuration_busy`), while it is connected to a repository (`configuration_connected`:
   * disconnecting removes the webhook) and, without `force`, while it manages resources
   * (`vine_has_resources`: destroy it first). Its state versions stay for the retention period;
   * vines that ran after it no longer name it.
   */
  async delete(user: UserActor, nameOrId: unknown, options: { force?: unknown } = {}): Promise<DeletedVine> {
    const force = parseForce(options.force);
    const { record, scope } = await this.access.locate(
      user,
      'vineyards.manage',
      'configuration_not_found',
      (stores, ownerId) => findVine(stores, ownerId, nameOrId),
    );
    const resources = force ? 0 : await managedResourceCount(this.deps, scope, record);
    return this.deps.uow.run(scope, async (stores) => {
      const vine = await stores.vines.get(record.owner_id, record.id);
      if (!vine) throw new NotFoundError('configuration');
      const active = await activeJobIds(stores, vine);
      if (active.length > 0) {
        throw new ConflictError(
          'configuration_busy',
          `configuration ${vine.name} has a queued or running job (${active[0]}); cancel it or wait for it to end, then delete`,
        );
      }
      const connection = await stores.vcs.get(vine.owner_id, vine.id);
      if (connection) {
        throw new ConflictError(
          'configuration_connected',
          `configuration ${vine.name} is connected to ${connection.repository}: disconnect it first (trellis configs disconnect ${vine.name}), which removes the webhook`,
        );
      }
      if (!force && (resources > 0 || vine.status === 'DEPLOYED')) {
        const what = resources > 0 ? `${resources} resource${resources === 1 ? '' : 's'}` : 'what it deployed';
        throw new ConflictError(
          'vine_has_resources',
          `configuration ${vine.name} still manages ${what}: destroy it first (trellis destroy ${vine.name}), or delete it with force to leave them running unmanaged (organization admins and owners)`,
        );
      }
      const now = this.deps.clock.now();
      const days = this.deps.settings.deletedVineRetentionDays;
      const keptUntil = days > 0 ? new Date(now.getTime() + days * 86_400_000).toISOString() : null;
      await stores.vines.markDeleted(vine.owner_id, vine.id, now.toISOString(), keptUntil);
      // Vines that ran after this one no longer name it.
      for (const downstream of await stores.vines.listDownstream(vine.owner_id, vine.id)) {
        const after = downstream.triggers.after.filter((id) => id !== vine.id);
        await stores.vines.updateSettings(vine.owner_id, downstream.id, { triggers: { after } }, now.toISOString());
      }
      await recordAudit(stores, this.deps, user, {
        action: 'vine.delete',
        target: { type: 'vine', id: vine.id },
        owner_id: vine.owner_id,
        details: { name: vine.name, vineyard_id: vine.vineyard_id, force, state_kept_until: keptUntil },
      });
      return { id: vine.id, name: vine.name, state_kept_until: keptUntil };
    });
  }

  /** `PATCH /api/cli/vineyards/{id}`: a new name (`vineyard_name_taken` if the owner has it). */
  async updateVineyard(user: UserActor, id: unknown, input: { name?: unknown }): Promise<VineyardView> {
    const vineyardId = requireUuid(id, 'id');
    const name = requireName(input.name, 'name');
    const { record, scope } = await this.access.locate(
      user,
      'vineyards.manage',
      'vineyard_not_found',
      (stores, ownerId) => stores.vineyards.get(ownerId, vineyardId),
    );
    return this.deps.uow.run(scope, async (stores) => {
      const renamed = await stores.vineyards.rename(record.owner_id, vineyardId, name);
      await recordAudit(stores, this.deps, user, {
        action: 'vineyard.update',
        target: { type: 'vineyard', id: vineyardId },
        owner_id: record.owner_id,
        details: { name, previous_name: record.name },
      });
      const vines = await stores.vines.list(record.owner_id, { vineyard_id: vineyardId });
      return { ...renamed, vines: vines.map(vineForPeople) };
    });
  }

  /** `DELETE /api/cli/vineyards/{id}`: only an empty vineyard (`vineyard_not_empty`). */
  async deleteVineyard(user: UserActor, id: unknown): Promise<void> {
    const vineyardId = requireUuid(id, 'id');
    const { record, scope } = await this.access.locate(
      user,
      'vineyards.manage',
      'vineyard_not_found',
      (stores, ownerId) => stores.vineyards.get(ownerId, vineyardId),
    );
    await this.deps.uow.run(scope, async (stores) => {
      const vines = await stores.vines.list(record.owner_id, { vineyard_id: vineyardId });
      if (vines.length > 0) {
        const names = vines.map((vine) => vine.name);
        throw new ConflictError(
          'vineyard_not_empty',
          `vineyard ${record.name} still holds ${names.length} configuration${names.length === 1 ? '' : 's'} (${names.slice(0, 5).join(', ')}${names.length > 5 ? ', …' : ''}): delete them first`,
        );
      }
      await stores.vineyards.markDeleted(record.owner_id, vineyardId, isoNow(this.deps));
      await recordAudit(stores, this.deps, user, {
        action: 'vineyard.delete',
        target: { type: 'vineyard', id: vineyardId },
        owner_id: record.owner_id,
        details: { name: record.name },
      });
    });
  }

  /** System work: the state of vines deleted longer ago than the retention goes, bytes too. */
  async purgeDeleted(): Promise<number> {
    const now = isoNow(this.deps);
    const keys = await this.deps.uow.run(systemScope, (stores) => stores.vines.purgeDeleted(now, PURGE_BATCH));
    await deleteStateArtifacts(this.deps, keys);
    return keys.length;
  }
}

function parseForce(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 'false') return false;
  if (value === true || value === 'true' || value === '') return true;
  throw new ValidationError('force must be true or false', [{ path: 'force', message: 'must be true or false' }]);
}

async function activeJobIds(stores: Stores, vine: Vine): Promise<string[]> {
  const ids: string[] = [];
  for (const status of ['QUEUED', 'PROCESSING'] as const) {
    ids.push(...(await stores.jobs.list(vine.owner_id, { vine_id: vine.id, status })).map((job) => job.id));
  }
  return ids;
}

async function findVine(stores: Stores, ownerId: string, nameOrId: unknown): Promise<Vine | null> {
  if (typeof nameOrId !== 'string' || nameOrId === '') return null;
  if (isUuid(nameOrId)) {
    const byId = await stores.vines.get(ownerId, nameOrId.toLowerCase());
    if (byId) return byId;
  }
  return stores.vines.findByName(ownerId, nameOrId);
}

async function viewOf(stores: Stores, vine: Vine): Promise<VineView> {
  const [cloudIdentity, components] = await Promise.all([
    vine.cloud_identity_id ? stores.cloudIdentities.get(vine.owner_id, vine.cloud_identity_id) : null,
    stores.vines.getComponents(vine.owner_id, vine.id),
  ]);
  return { ...vineForPeople(vine), cloud_identity: cloudIdentity, components };
}
