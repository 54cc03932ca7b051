import {
  ConflictError,
  NotFoundError,
  type Page,
  type PageRequest,
  type RegistryModule,
  type RegistryModuleStore,
  type RegistryModuleVersion,
} from '@trellis/core';
import { copy, pageNewestFirst } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

/** Registry modules and their versions (issue 28), as the SQL store keeps them. */
export class MemoryRegistryModuleStore implements RegistryModuleStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async find(ownerId: string, name: string, system: string): Promise<RegistryModule | null> {
    const found = [...this.tx.state.registryModules.values()].find(
      (module) => module.owner_id === ownerId && module.name === name && module.system === system,
    );
    return found && this.tx.sees(ownerId) ? copy(found) : null;
  }

  async create(module: RegistryModule): Promise<RegistryModule> {
    this.tx.checkWrite('registry_modules', module.owner_id);
    if (await this.find(module.owner_id, module.name, module.system)) {
      throw new ConflictError('already_exists', 'a record with the same key already exists');
    }
    this.tx.state.registryModules.set(module.id, copy(module));
    return copy(module);
  }

  async update(module: RegistryModule): Promise<RegistryModule | null> {
    this.tx.checkWrite('registry_modules', module.owner_id);
    const found = this.tx.state.registryModules.get(module.id);
    if (!found || found.owner_id !== module.owner_id) return null;
    found.latest_version = module.latest_version;
    found.updated_at = module.updated_at;
    return copy(found);
  }

  async page(ownerId: string, request: PageRequest): Promise<Page<RegistryModule>> {
    const visible = this.tx.sees(ownerId);
    return pageNewestFirst(
      this.tx.state.registryModules,
      (module) => visible && module.owner_id === ownerId,
      (module) => module.created_at,
      request,
    );
  }

  async delete(ownerId: string, id: string): Promise<boolean> {
    // Another owner's rows are out of sight, as SQL's filters (and Postgres's row security) keep them.
    if (!this.tx.sees(ownerId)) return false;
    this.tx.checkWrite('registry_modules', ownerId);
    const found = this.tx.state.registryModules.get(id);
    if (!found || found.owner_id !== ownerId) return false;
    for (const [versionId, version] of this.tx.state.registryModuleVersions) {
      if (version.module_id === id) this.tx.state.registryModuleVersions.delete(versionId);
    }
    this.tx.state.registryModules.delete(id);
    return true;
  }

  async createVersion(version: RegistryModuleVersion): Promise<RegistryModuleVersion> {
    this.tx.checkWrite('registry_module_versions', version.owner_id);
    const module = this.tx.state.registryModules.get(version.module_id);
    if (!module || module.owner_id !== version.owner_id) throw new NotFoundError('module');
    if (await this.getVersion(version.owner_id, version.module_id, version.version)) {
      throw new ConflictError('module_version_exists', 'this module version is already published');
    }
    this.tx.state.registryModuleVersions.set(version.id, copy(version));
    return copy(version);
  }

  async getVersion(ownerId: string, moduleId: string, version: string): Promise<RegistryModuleVersion | null> {
    const found = [...this.tx.state.registryModuleVersions.values()].find(
      (candidate) =>
        candidate.owner_id === ownerId && candidate.module_id === moduleId && candidate.version === version,
    );
    return found && this.tx.sees(ownerId) ? copy(found) : null;
  }

  async getVersionById(ownerId: string, id: string): Promise<RegistryModuleVersion | null> {
    const found = this.tx.state.registryModuleVersions.get(id);
    return found && found.owner_id === ownerId && this.tx.sees(ownerId) ? copy(found) : null;
  }

  async listVersions(ownerId: string, moduleId: string): Promise<RegistryModuleVersion[]> {
    if (!this.tx.sees(ownerId)) return [];
    return [...this.tx.state.registryModuleVersions.values()]
      .filter((version) => version.owner_id === ownerId && version.module_id === moduleId)
      .sort((a, b) => (a.created_at === b.created_at ? a.id.localeCompare(b.id) : a.created_at < b.created_at ? -1 : 1))
      .map(copy);
  }

  async setDeprecation(
    ownerId: string,
    id: string,
    at: string | null,
    reason: string | null,
  ): Promise<RegistryModuleVersion | null> {
    if (!this.tx.sees(ownerId)) return null;
    this.tx.checkWrite('registry_module_versions', ownerId);
    const found = this.tx.state.registryModuleVersions.get(id);
    if (!found || found.owner_id !== ownerId) return null;
    found.deprecated_at = at;
    found.deprecation_reason = reason;
    return copy(found);
  }

  async deleteVersion(ownerId: string, id: string): Promise<boolean> {
    if (!this.tx.sees(ownerId)) return false;
    this.tx.checkWrite('registry_module_versions', ownerId);
    const found = this.tx.state.registryModuleVersions.get(id);
    if (!found || found.owner_id !== ownerId) return false;
    this.tx.state.registryModuleVersions.delete(id);
    return true;
  }

  async storageKeys(ownerId: string): Promise<string[]> {
    if (!this.tx.sees(ownerId)) return [];
    return [...this.tx.state.registryModuleVersions.values()]
      .filter((version) => version.owner_id === ownerId)
      .sort((a, b) => a.id.localeCompare(b.id))
      .map((version) => version.storage_key);
  }
}
