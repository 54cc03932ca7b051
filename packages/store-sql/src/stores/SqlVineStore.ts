import {
  type ApprovalSetting,
  COMPONENT_KINDS,
  type ComponentKind,
  type Engine,
  type ExecutionMode,
  type NewVine,
  NotFoundError,
  type Page,
  type PageRequest,
  type Variables,
  type Vine,
  type VineComponents,
  type VineFilter,
  type VineSource,
  type VineStatus,
  type VineStore,
  type DriftResult,
  type VineSettingsPatch,
  DEFAULT_WORKSPACE_SETTINGS,
  type WorkspaceSettings,
  workspaceSettingsOf,
  emptyFleetCounts,
  type FleetCounts,
  type FleetDrift,
  type FleetFilter,
  type FleetVine,
  type PlanPolicyResult,
  tallyFleet,
} from '@trellis/core';
import type { Knex } from 'knex';
import { ownerList, type OwnerIds } from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import {
  integerOut,
  jsonIn,
  jsonOut,
  type Row,
  textOut,
  textOutOrNull,
  timeIn,
  timeInOrNull,
  timeOut,
  timeOutOrNull,
  uuidOut,
  uuidOutOrNull,
} from '../rows.js';
import { keysetPageOfOwners } from './keysetPage.js';

/** A component row's `data`: the component without the job id, which has its own column. */
type StoredData<K extends ComponentKind> = Omit<NonNullable<VineComponents[K]>, 'job_id'>;

export class SqlVineStore implements VineStore {
  constructor(private readonly db: SqlSession) {}

  async create(vine: NewVine): Promise<Vine> {
    const [row] = await this.db.recoverable((db) =>
      db
        .insert('vines', {
          id: vine.id,
          owner_id: vine.owner_id,
          vineyard_id: vine.vineyard_id,
          name: vine.name,
          project_name: vine.project_name,
          cloud_identity_id: vine.cloud_identity_id,
          source: jsonIn(vine.source),
          variables: jsonIn(vine.variables),
          engine: jsonIn(vine.engine),
          status: vine.status,
          status_message: vine.status_message,
          // Drift and trigger columns (m012) only when set: their defaults are what null reads as.
          ...(vine.drift_detection ? { drift_interval_minutes: vine.drift_detection.interval_minutes } : {}),
          ...(vine.next_drift_check_at ? { next_drift_check_at: timeIn(vine.next_drift_check_at) } : {}),
          ...(vine.drift ? { drift: jsonIn(vine.drift) } : {}),
          ...(vine.triggers.after.length > 0 ? { triggers_after: jsonIn(vine.triggers.after) } : {}),
          // Written only when set, so the store still seeds schemas from before m016.
          ...(vine.approval === null ? {} : { approval: jsonIn(vine.approval) }),
          // The workspace columns (m033) only when set: their defaults are a Trellis vine's.
          ...(vine.tags && vine.tags.length > 0 ? { tags: jsonIn(vine.tags) } : {}),
          ...(vine.terraform_version ? { terraform_version: vine.terraform_version } : {}),
          ...(vine.execution_mode ? { execution_mode: vine.execution_mode } : {}),
          // m043: only settings that differ from the defaults are kept, so none leaves it null.
          ...(vine.workspace_settings ? workspaceSettingsColumn(vine.workspace_settings) : {}),
          created_at: timeIn(vine.created_at),
          updated_at: timeIn(vine.updated_at),
        })
        .returning('*'),
    );
    return toVine(row);
  }

  async get(ownerId: string, id: string): Promise<Vine | null> {
    return this.findOne(ownerId, { id });
  }

  async findByName(ownerId: string, name: string): Promise<Vine | null> {
    return this.findOne(ownerId, { name });
  }

  async findByProjectName(ownerId: string, projectName: string): Promise<Vine | null> {
    return this.findOne(ownerId, { project_name: projectName });
  }

  async list(ownerId: string, filter: VineFilter = {}): Promise<Vine[]> {
    const query = this.live()
      .where({ owner_id: ownerId })
      .orderBy([{ column: 'created_at' }, { column: 'seq' }]);
    if (filter.vineyard_id !== undefined) query.where({ vineyard_id: filter.vineyard_id });
    if (filter.vineyard_ids !== undefined) query.whereIn('vineyard_id', filter.vineyard_ids);
    const rows: Row[] = await query;
    return rows.map(toVine);
  }

  async page(owners: OwnerIds, request: PageRequest): Promise<Page<Vine>> {
    return keysetPageOfOwners(
      ownerList(owners),
      (ownerId) => this.live().where({ owner_id: ownerId }),
      'created_at',
      request,
      toVine,
    );
  }

  async fleetPage(owners: OwnerIds, filter: FleetFilter, request: PageRequest): Promise<Page<FleetVine>> {
    return keysetPageOfOwners(
      ownerList(owners),
      (ownerId) => this.fleet(this.live().where({ owner_id: ownerId }), filter),
      'created_at',
      request,
      toFleetVine,
    );
  }

  /**
   * One statement: the owners' live vines that match the filter's tag and last change, grouped by
   * status, drift and policy result (at most 96 groups); core tallies each dimension from them.
   */
  async fleetCounts(owners: OwnerIds, filter: FleetFilter): Promise<FleetCounts> {
    const { status: _s, drift: _d, policy: _p, ...rest } = filter;
    const rows: Row[] = await this.fleet(this.live().whereIn('owner_id', ownerList(owners)), rest)
      .select('status', 'drift_status', 'plan_policy')
      .count({ n: '*' })
      .groupBy('status', 'drift_status', 'plan_policy');
    const counts = emptyFleetCounts();
    for (const row of rows) {
      const status = textOut(row.status) as VineStatus;
      const driftStatus = row.drift_status === null ? 'never_checked' : (String(row.drift_status) as FleetDrift);
      const policy = row.plan_policy === null ? 'none' : (textOut(row.plan_policy) as PlanPolicyResult);
      if (!(status in counts.status) || !(driftStatus in counts.drift) || !(policy in counts.policy)) continue;
      tallyFleet(counts, { status, drift: driftStatus, policy }, Number(row.n), filter);
    }
    return counts;
  }

  async recordPlanPolicy(ownerId: string, id: string, result: PlanPolicyResult): Promise<void> {
    await this.live()
      .where({ owner_id: ownerId, id })
      .update({ plan_policy: result === 'none' ? null : result });
  }

  async updateStatus(
    ownerId: string,
    id: string,
    status: VineStatus,
    message: string | null,
    at: string,
  ): Promise<Vine> {
    const [row] = await this.live()
      .where({ owner_id: ownerId, id })
      .update({ status, status_message: message, updated_at: timeIn(at) })
      .returning('*');
    if (!row) throw new NotFoundError('configuration');
    return toVine(row);
  }

  async getComponents(ownerId: string, vineId: string): Promise<VineComponents> {
    const rows: Row[] = await this.db.table('vine_components').where({ owner_id: ownerId, vine_id: vineId });
    const components: VineComponents = { cluster: null, argocd: null, outputs: null };
    for (const row of rows) {
      const jobId = uuidOut(row.job_id);
      const kind = textOut(row.kind) as ComponentKind;
      switch (kind) {
        case 'cluster':
          components.cluster = { ...jsonOut<StoredData<'cluster'>>(row.data), job_id: jobId };
          break;
        case 'argocd':
          components.argocd = { ...jsonOut<StoredData<'argocd'>>(row.data), job_id: jobId };
          break;
        case 'outputs':
          components.outputs = { ...jsonOut<StoredData<'outputs'>>(row.data), job_id: jobId };
          break;
        default: {
          const unknown: never = kind;
          throw new TypeError(`unknown vine component kind ${String(unknown)}`);
        }
      }
    }
    return components;
  }

  async saveComponents(ownerId: string, vineId: string, components: VineComponents, at: string): Promise<void> {
    // The vine must be the owner's: a components row names its owner, and without this check an
    // owner could attach rows to another owner's vine.
    await this.requireVine(ownerId, vineId);
    for (const kind of COMPONENT_KINDS) {
      const component = components[kind];
      if (component === null) continue;
      const { job_id: jobId, ...data } = component;
      await this.db
        .insert('vine_components', {
          vine_id: vineId,
          owner_id: ownerId,
          kind,
          data: jsonIn(data),
          job_id: jobId,
          updated_at: timeIn(at),
        })
        .onConflict(['vine_id', 'kind'])
        .merge(['data', 'job_id', 'updated_at']);
    }
  }

  async clearComponents(ownerId: string, vineId: string): Promise<void> {
    await this.db.table('vine_components').where({ owner_id: ownerId, vine_id: vineId }).delete();
  }

  async updateSettings(ownerId: string, id: string, patch: VineSettingsPatch, at: string): Promise<Vine> {
    const changes: Row = { updated_at: timeIn(at) };
    if (patch.drift_detection !== undefined) {
      changes.drift_interval_minutes = patch.drift_detection?.interval_minutes ?? null;
    }
    if (patch.next_drift_check_at !== undefined) changes.next_drift_check_at = timeInOrNull(patch.next_drift_check_at);
    if (patch.triggers !== undefined) changes.triggers_after = jsonIn(patch.triggers.after);
    if (patch.approval !== undefined) changes.approval = patch.approval === null ? null : jsonIn(patch.approval);
    if (patch.source !== undefined) changes.source = jsonIn(patch.source);
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.variables !== undefined) changes.variables = jsonIn(patch.variables);
    if (patch.tags !== undefined) changes.tags = jsonIn(patch.tags);
    if (patch.terraform_version !== undefined) changes.terraform_version = patch.terraform_version;
    if (patch.execution_mode !== undefined) changes.execution_mode = patch.execution_mode;
    if (patch.project_name !== undefined) changes.project_name = patch.project_name;
    if (patch.engine !== undefined) changes.engine = jsonIn(patch.engine);
    if (patch.cloud_identity_id !== undefined) changes.cloud_identity_id = patch.cloud_identity_id;
    if (patch.workspace_settings !== undefined) {
      changes.workspace_settings = workspaceSettingsColumn(patch.workspace_settings).workspace_settings ?? null;
    }
    const [row] = await this.db.recoverable((db) =>
      db.table('vines').where({ owner_id: ownerId, id }).whereNull('deleted_at').update(changes).returning('*'),
    );
    if (!row) throw new NotFoundError('configuration');
    return toVine(row);
  }

  async delete(ownerId: string, id: string): Promise<string[]> {
    await this.requireVine(ownerId, id);
    const versions: Row[] = await this.db
      .table('state_versions')
      .where({ owner_id: ownerId, vine_id: id })
      .select('storage_key');
    await this.db.table('state_versions').where({ owner_id: ownerId, vine_id: id }).delete();
    // Configuration versions go with their vine (issue 23), their objects with the state's.
    const configurations: Row[] = await this.db
      .table('configuration_versions')
      .where({ owner_id: ownerId, vine_id: id })
      .whereNotNull('storage_key')
      .select('storage_key');
    await this.db.table('configuration_versions').where({ owner_id: ownerId, vine_id: id }).delete();
    versions.push(...configurations);
    await this.db.table('state_locks').where({ owner_id: ownerId, vine_id: id }).delete();
    await this.db.table('vine_components').where({ owner_id: ownerId, vine_id: id }).delete();
    await this.db.table('vines').where({ owner_id: ownerId, id }).delete();
    return versions.map((row) => textOut(row.storage_key));
  }

  async markDeleted(ownerId: string, id: string, at: string, purgeAfter: string | null): Promise<void> {
    await this.requireVine(ownerId, id);
    await this.db.table('state_locks').where({ owner_id: ownerId, vine_id: id }).delete();
    await this.db.table('vine_components').where({ owner_id: ownerId, vine_id: id }).delete();
    await this.db
      .table('vines')
      .where({ owner_id: ownerId, id })
      .update({
        deleted_at: timeIn(at),
        purge_after: timeInOrNull(purgeAfter),
        next_drift_check_at: null,
        updated_at: timeIn(at),
      });
  }

  async purgeDeleted(now: string, limit: number): Promise<string[]> {
    const due: Row[] = await this.db.lockSkipLocked(
      this.db
        .table('vines')
        .whereNotNull('deleted_at')
        .whereNotNull('purge_after')
        .where('purge_after', '<=', timeIn(now))
        .orderBy([{ column: 'purge_after' }, { column: 'seq' }])
        .limit(limit)
        .select('id', 'owner_id'),
    );
    const keys: string[] = [];
    for (const vine of due) {
      const where = { owner_id: vine.owner_id, vine_id: vine.id };
      const versions: Row[] = await this.db.table('state_versions').where(where).select('storage_key');
      keys.push(...versions.map((row) => textOut(row.storage_key)));
      await this.db.table('state_versions').where(where).delete();
      await this.db.table('vines').where({ owner_id: vine.owner_id, id: vine.id }).update({ purge_after: null });
    }
    return keys;
  }

  async recordDrift(ownerId: string, id: string, drift: DriftResult | null): Promise<void> {
    await this.db
      .table('vines')
      .where({ owner_id: ownerId, id })
      .update({ drift: drift === null ? null : jsonIn(drift) });
  }

  /** Few vines per owner name upstreams; the JSON list is filtered here rather than by dialect. */
  async listDownstream(ownerId: string, upstreamId: string): Promise<Vine[]> {
    const rows: Row[] = await this.live()
      .where({ owner_id: ownerId })
      .whereNotNull('triggers_after')
      .orderBy([{ column: 'created_at' }, { column: 'seq' }]);
    return rows.map(toVine).filter((vine) => vine.triggers.after.includes(upstreamId));
  }

  async takeDueDriftChecks(now: string, limit: number): Promise<Vine[]> {
    const query = this.live()
      .whereNotNull('next_drift_check_at')
      .where('next_drift_check_at', '<=', timeIn(now))
      .orderBy([{ column: 'next_drift_check_at' }, { column: 'seq' }])
      .limit(limit);
    const rows: Row[] = await this.db.lockSkipLocked(query);
    return rows.map(toVine);
  }

  private async findOne(ownerId: string, where: Record<string, string>): Promise<Vine | null> {
    const row = await this.live()
      .where({ owner_id: ownerId, ...where })
      .first();
    return row ? toVine(row) : null;
  }

  private async requireVine(ownerId: string, vineId: string): Promise<void> {
    const row = await this.live().where({ owner_id: ownerId, id: vineId }).first('id');
    if (!row) throw new NotFoundError('configuration');
  }

  /** `query` narrowed to the vines that stand as `filter` says. */
  private fleet(query: Knex.QueryBuilder, filter: FleetFilter): Knex.QueryBuilder {
    if (filter.status !== undefined) query.where('status', filter.status);
    if (filter.drift === 'never_checked') query.whereNull('drift');
    else if (filter.drift !== undefined) query.where('drift_status', filter.drift);
    if (filter.policy === 'none') query.whereNull('plan_policy');
    else if (filter.policy !== undefined) query.where('plan_policy', filter.policy);
    if (filter.tag !== undefined) this.db.whereJsonArrayHas(query, 'tags', filter.tag);
    if (filter.changed_since !== undefined) query.where('updated_at', '>=', timeIn(filter.changed_since));
    if (filter.changed_before !== undefined) query.where('updated_at', '<', timeIn(filter.changed_before));
    return query;
  }

  /** Vines not deleted (issue 25): a deleted vine's row stays for its jobs, and no read sees it. */
  private live() {
    return this.db.table('vines').whereNull('deleted_at');
  }
}

function toVine(row: Row): Vine {
  return {
    id: uuidOut(row.id),
    owner_id: uuidOut(row.owner_id),
    vineyard_id: uuidOut(row.vineyard_id),
    name: textOut(row.name),
    project_name: textOut(row.project_name),
    cloud_identity_id: uuidOutOrNull(row.cloud_identity_id),
    source: jsonOut<VineSource>(row.source),
    variables: jsonOut<Variables>(row.variables),
    engine: jsonOut<Engine>(row.engine),
    status: textOut(row.status) as VineStatus,
    status_message: textOutOrNull(row.status_message),
    drift_detection:
      row.drift_interval_minutes === null || row.drift_interval_minutes === undefined
        ? null
        : { interval_minutes: integerOut(row.drift_interval_minutes) },
    next_drift_check_at: timeOutOrNull(row.next_drift_check_at),
    drift: row.drift === null || row.drift === undefined ? null : jsonOut<DriftResult>(row.drift),
    triggers: {
      after:
        row.triggers_after === null || row.triggers_after === undefined ? [] : jsonOut<string[]>(row.triggers_after),
    },
    approval: row.approval === null || row.approval === undefined ? null : jsonOut<ApprovalSetting>(row.approval),
    tags: row.tags === null || row.tags === undefined ? [] : jsonOut<string[]>(row.tags),
    terraform_version: row.terraform_version ? textOut(row.terraform_version) : 'latest',
    execution_mode: row.execution_mode ? (textOut(row.execution_mode) as ExecutionMode) : 'remote',
    workspace_settings: workspaceSettingsOf(
      row.workspace_settings === null || row.workspace_settings === undefined
        ? null
        : jsonOut<Partial<WorkspaceSettings>>(row.workspace_settings),
    ),
    created_at: timeOut(row.created_at),
    updated_at: timeOut(row.updated_at),
  };
}

function toFleetVine(row: Row): FleetVine {
  return { ...toVine(row), policy: row.plan_policy ? (textOut(row.plan_policy) as PlanPolicyResult) : 'none' };
}

/** The `workspace_settings` column (m043): the settings that differ from the defaults, or nothing. */
function workspaceSettingsColumn(settings: WorkspaceSettings): Row {
  const changed = Object.fromEntries(
    Object.entries(settings).filter(
      ([key, value]) =>
        JSON.stringify(value) !== JSON.stringify(DEFAULT_WORKSPACE_SETTINGS[key as keyof WorkspaceSettings]),
    ),
  );
  return Object.keys(changed).length > 0 ? { workspace_settings: jsonIn(changed) } : {};
}
