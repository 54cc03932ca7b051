import {
  ConflictError,
  NotFoundError,
  type Page,
  type PageRequest,
  DEFAULT_VINE_WORKSPACE,
  type NewVine,
  type Vine,
  type VineComponents,
  type VineFilter,
  type VineStatus,
  type VineStore,
  type DriftResult,
  type VineSettingsPatch,
  countFleet,
  type FleetCounts,
  type FleetFilter,
  type FleetVine,
  matchesFleetFilter,
  type PlanPolicyResult,
} from '@trellis/core';
import { copy, oldestFirst, pageNewestFirst } from '../MemoryState.js';
import { ownerList, type OwnerIds } from '@trellis/core';
import type { MemoryTransaction } from '../MemoryTransaction.js';

function noComponents(): VineComponents {
  return { cluster: null, argocd: null, outputs: null };
}

export class MemoryVineStore implements VineStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async create(input: NewVine): Promise<Vine> {
    const vine: Vine = {
      ...DEFAULT_VINE_WORKSPACE,
      ...input,
      tags: [...(input.tags ?? [])],
      workspace_settings: copy(input.workspace_settings ?? DEFAULT_VINE_WORKSPACE.workspace_settings),
    };
    const { vines } = this.tx.state;
    this.tx.checkWrite('vines', vine.owner_id);
    const siblings = [...vines.values()].filter((existing) => existing.owner_id === vine.owner_id);
    if (siblings.some((existing) => existing.name === vine.name)) {
      throw new ConflictError('vine_name_taken', `a configuration named ${vine.name} already exists`);
    }
    if (siblings.some((existing) => existing.project_name === vine.project_name)) {
      throw new ConflictError('project_name_taken', `a configuration with project ${vine.project_name} already exists`);
    }
    if (vines.has(vine.id)) throw new ConflictError('vine_exists', 'a configuration with this id exists');
    vines.set(vine.id, copy(vine));
    return copy(vine);
  }

  async get(ownerId: string, id: string): Promise<Vine | null> {
    const vine = this.owned(ownerId, id);
    return vine ? copy(vine) : null;
  }

  async findByName(ownerId: string, name: string): Promise<Vine | null> {
    return this.find(ownerId, (vine) => vine.name === name);
  }

  async findByProjectName(ownerId: string, projectName: string): Promise<Vine | null> {
    return this.find(ownerId, (vine) => vine.project_name === projectName);
  }

  async list(ownerId: string, filter: VineFilter = {}): Promise<Vine[]> {
    if (!this.tx.sees(ownerId)) return [];
    const mine = [...this.tx.state.vines.values()].filter(
      (vine) =>
        vine.owner_id === ownerId &&
        (filter.vineyard_id === undefined || vine.vineyard_id === filter.vineyard_id) &&
        (filter.vineyard_ids === undefined || filter.vineyard_ids.includes(vine.vineyard_id)),
    );
    return oldestFirst(mine, (vine) => vine.created_at).map(copy);
  }

  async page(owners: OwnerIds, request: PageRequest): Promise<Page<Vine>> {
    const visible = ownerList(owners).filter((owner) => this.tx.sees(owner));
    return pageNewestFirst(
      this.tx.state.vines,
      (vine) => visible.includes(vine.owner_id),
      (vine) => vine.created_at,
      request,
    );
  }

  async fleetPage(owners: OwnerIds, filter: FleetFilter, request: PageRequest): Promise<Page<FleetVine>> {
    const visible = ownerList(owners).filter((owner) => this.tx.sees(owner));
    const fleet = new Map([...this.tx.state.vines].map(([id, vine]) => [id, this.fleetVine(vine)]));
    return pageNewestFirst(
      fleet,
      (vine) => visible.includes(vine.owner_id) && matchesFleetFilter(vine, filter),
      (vine) => vine.created_at,
      request,
    );
  }

  async fleetCounts(owners: OwnerIds, filter: FleetFilter): Promise<FleetCounts> {
    const visible = ownerList(owners).filter((owner) => this.tx.sees(owner));
    const mine = [...this.tx.state.vines.values()].filter((vine) => visible.includes(vine.owner_id));
    return countFleet(
      mine.map((vine) => this.fleetVine(vine)),
      filter,
    );
  }

  async recordPlanPolicy(ownerId: string, id: string, result: PlanPolicyResult): Promise<void> {
    if (!this.owned(ownerId, id)) return;
    this.tx.checkWrite('vines', ownerId);
    if (result === 'none') this.tx.state.planPolicies.delete(id);
    else this.tx.state.planPolicies.set(id, result);
  }

  private fleetVine(vine: Vine): FleetVine {
    return { ...vine, policy: this.tx.state.planPolicies.get(vine.id) ?? 'none' };
  }

  async updateStatus(ownerId: string, id: string, status: VineStatus, message: string | null, at: string) {
    const vine = this.owned(ownerId, id);
    if (!vine) throw new NotFoundError('vine');
    vine.status = status;
    vine.status_message = message;
    vine.updated_at = at;
    return copy(vine);
  }

  async getComponents(ownerId: string, vineId: string): Promise<VineComponents> {
    const stored = this.tx.state.components.get(vineId);
    if (!stored || stored.owner_id !== ownerId || !this.tx.sees(ownerId)) return noComponents();
    return copy(stored.components);
  }

  async saveComponents(ownerId: string, vineId: string, components: VineComponents, at: string): Promise<void> {
    if (!this.owned(ownerId, vineId)) return;
    const { components: table } = this.tx.state;
    const current = table.get(vineId)?.components ?? noComponents();
    table.set(vineId, {
      owner_id: ownerId,
      components: {
        cluster: components.cluster ? copy(components.cluster) : current.cluster,
        argocd: components.argocd ? copy(components.argocd) : current.argocd,
        outputs: components.outputs ? copy(components.outputs) : current.outputs,
      },
      updated_at: at,
    });
  }

  async clearComponents(ownerId: string, vineId: string): Promise<void> {
    if (!this.owned(ownerId, vineId)) return;
    this.tx.state.components.delete(vineId);
  }

  async updateSettings(ownerId: string, id: string, patch: VineSettingsPatch, at: string): Promise<Vine> {
    const vine = this.owned(ownerId, id);
    if (!vine) throw new NotFoundError('configuration');
    this.tx.checkWrite('vines', ownerId);
    if (patch.drift_detection !== undefined) vine.drift_detection = copy(patch.drift_detection);
    if (patch.next_drift_check_at !== undefined) vine.next_drift_check_at = patch.next_drift_check_at;
    if (patch.triggers !== undefined) vine.triggers = copy(patch.triggers);
    if (patch.approval !== undefined) vine.approval = copy(patch.approval);
    if (patch.source !== undefined) vine.source = copy(patch.source);
    if (patch.name !== undefined) {
      const taken = [...this.tx.state.vines.values()].some(
        (other) => other.owner_id === ownerId && other.id !== id && other.name === patch.name,
      );
      if (taken) throw new ConflictError('vine_name_taken', `a configuration named ${patch.name} already exists`);
      vine.name = patch.name;
    }
    if (patch.tags !== undefined) vine.tags = [...patch.tags];
    if (patch.variables !== undefined) vine.variables = copy(patch.variables);
    if (patch.terraform_version !== undefined) vine.terraform_version = patch.terraform_version;
    if (patch.execution_mode !== undefined) vine.execution_mode = patch.execution_mode;
    if (patch.project_name !== undefined) {
      const taken = [...this.tx.state.vines.values()].some(
        (other) => other.owner_id === ownerId && other.id !== id && other.project_name === patch.project_name,
      );
      if (taken) {
        throw new ConflictError(
          'project_name_taken',
          `a configuration with project ${patch.project_name} already exists`,
        );
      }
      vine.project_name = patch.project_name;
    }
    if (patch.engine !== undefined) vine.engine = copy(patch.engine);
    if (patch.cloud_identity_id !== undefined) vine.cloud_identity_id = patch.cloud_identity_id;
    if (patch.workspace_settings !== undefined) vine.workspace_settings = copy(patch.workspace_settings);
    vine.updated_at = at;
    return copy(vine);
  }

  async delete(ownerId: string, id: string): Promise<string[]> {
    const vine = this.owned(ownerId, id);
    if (!vine) throw new NotFoundError('configuration');
    this.tx.checkWrite('vines', ownerId);
    const { state } = this.tx;
    const keys = state.stateVersions.filter((version) => version.vine_id === id).map((version) => version.storage_key);
    state.stateVersions = state.stateVersions.filter((version) => version.vine_id !== id);
    for (const [versionId, version] of state.configurationVersions) {
      if (version.vine_id !== id) continue;
      if (version.storage_key !== null) keys.push(version.storage_key);
      state.configurationVersions.delete(versionId);
    }
    state.stateLocks.delete(id);
    state.components.delete(id);
    state.vines.delete(id);
    return keys;
  }

  async markDeleted(ownerId: string, id: string, at: string, purgeAfter: string | null): Promise<void> {
    const vine = this.owned(ownerId, id);
    if (!vine) throw new NotFoundError('configuration');
    this.tx.checkWrite('vines', ownerId);
    const { state } = this.tx;
    state.stateLocks.delete(id);
    state.components.delete(id);
    state.vines.delete(id);
    state.deletedVines.set(id, {
      vine: { ...vine, next_drift_check_at: null, updated_at: at },
      purge_after: purgeAfter,
    });
  }

  async purgeDeleted(now: string, limit: number): Promise<string[]> {
    const { state } = this.tx;
    const due = [...state.deletedVines.values()]
      .filter(
        (deleted) => deleted.purge_after !== null && deleted.purge_after <= now && this.tx.sees(deleted.vine.owner_id),
      )
      .sort((a, b) => (a.purge_after as string).localeCompare(b.purge_after as string))
      .slice(0, limit);
    const keys: string[] = [];
    for (const deleted of due) {
      const id = deleted.vine.id;
      keys.push(
        ...state.stateVersions.filter((version) => version.vine_id === id).map((version) => version.storage_key),
      );
      state.stateVersions = state.stateVersions.filter((version) => version.vine_id !== id);
      deleted.purge_after = null;
    }
    return keys;
  }

  async recordDrift(ownerId: string, id: string, drift: DriftResult | null): Promise<void> {
    const vine = this.owned(ownerId, id);
    if (!vine) return;
    this.tx.checkWrite('vines', ownerId);
    vine.drift = drift === null ? null : copy(drift);
  }

  async listDownstream(ownerId: string, upstreamId: string): Promise<Vine[]> {
    const all = await this.list(ownerId);
    return all.filter((vine) => vine.triggers.after.includes(upstreamId));
  }

  async takeDueDriftChecks(now: string, limit: number): Promise<Vine[]> {
    const due = [...this.tx.state.vines.values()].filter(
      (vine) => vine.next_drift_check_at !== null && vine.next_drift_check_at <= now && this.tx.sees(vine.owner_id),
    );
    due.sort((a, b) => (a.next_drift_check_at as string).localeCompare(b.next_drift_check_at as string));
    return due.slice(0, limit).map(copy);
  }

  private owned(ownerId: string, id: string): Vine | undefined {
    const vine = this.tx.state.vines.get(id);
    return vine && vine.owner_id === ownerId && this.tx.sees(ownerId) ? vine : undefined;
  }

  private find(ownerId: string, match: (vine: Vine) => boolean): Vine | null {
    if (!this.tx.sees(ownerId)) return null;
    for (const vine of this.tx.state.vines.values()) {
      if (vine.owner_id === ownerId && match(vine)) return copy(vine);
    }
    return null;
  }
}
