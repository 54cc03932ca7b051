import {
  ConflictError,
  type RegistryGpgKey,
  type RegistryProvider,
  type RegistryProviderPlatform,
  type RegistryProviderStore,
  type RegistryProviderVersion,
  type RegistryProviderVersionWithPlatforms,
} from '@trellis/core';
import { copy } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

/** The registry's providers (issue 28); versions and platforms go with their provider and version. */
export class MemoryRegistryProviderStore implements RegistryProviderStore {
  constructor(private readonly tx: MemoryTransaction) {}

  private get state() {
    return this.tx.state;
  }

  async ensureProvider(provider: RegistryProvider): Promise<RegistryProvider> {
    const found = await this.getProvider(provider.owner_id, provider.type);
    if (found) return found;
    this.tx.checkWrite('registry_providers', provider.owner_id);
    this.state.registryProviders.set(provider.id, copy(provider));
    return copy(provider);
  }

  async getProvider(ownerId: string, type: string): Promise<RegistryProvider | null> {
    const found = this.owned(this.state.registryProviders, ownerId).find((provider) => provider.type === type);
    return found ? copy(found) : null;
  }

  async listProviders(ownerId: string, limit: number, after: string | null): Promise<RegistryProvider[]> {
    return this.owned(this.state.registryProviders, ownerId)
      .filter((provider) => after === null || provider.type > after)
      .sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0))
      .slice(0, limit)
      .map(copy);
  }

  async createVersion(version: RegistryProviderVersion): Promise<RegistryProviderVersion> {
    this.tx.checkWrite('registry_provider_versions', version.owner_id);
    const provider = this.state.registryProviders.get(version.provider_id);
    if (!provider || provider.owner_id !== version.owner_id) {
      throw new ConflictError('referenced_record_missing', 'the record refers to a record that does not exist');
    }
    const versions = [...this.state.registryProviderVersions.values()];
    if (versions.some((v) => v.provider_id === version.provider_id && v.version === version.version)) {
      throw new ConflictError('provider_version_exists', 'this provider version is already published');
    }
    this.state.registryProviderVersions.set(version.id, copy(version));
    return copy(version);
  }

  async getVersion(
    ownerId: string,
    providerId: string,
    version: string,
  ): Promise<RegistryProviderVersionWithPlatforms | null> {
    const found = this.owned(this.state.registryProviderVersions, ownerId).find(
      (candidate) => candidate.provider_id === providerId && candidate.version === version,
    );
    return found ? this.withPlatforms(found) : null;
  }

  async getVersionById(ownerId: string, versionId: string): Promise<RegistryProviderVersionWithPlatforms | null> {
    const found = this.owned(this.state.registryProviderVersions, ownerId).find((v) => v.id === versionId);
    return found ? this.withPlatforms(found) : null;
  }

  async listVersions(ownerId: string, providerId: string): Promise<RegistryProviderVersionWithPlatforms[]> {
    return this.owned(this.state.registryProviderVersions, ownerId)
      .filter((version) => version.provider_id === providerId)
      .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1))
      .map((version) => this.withPlatforms(version));
  }

  async deleteVersion(ownerId: string, versionId: string): Promise<string[]> {
    const keys: string[] = [];
    for (const platform of this.owned(this.state.registryProviderPlatforms, ownerId)) {
      if (platform.version_id !== versionId) continue;
      keys.push(platform.storage_key);
      this.state.registryProviderPlatforms.delete(platform.id);
    }
    const version = this.state.registryProviderVersions.get(versionId);
    if (version && version.owner_id === ownerId && this.tx.sees(ownerId)) {
      this.state.registryProviderVersions.delete(versionId);
    }
    return keys;
  }

  async addPlatform(platform: RegistryProviderPlatform): Promise<RegistryProviderPlatform> {
    this.tx.checkWrite('registry_provider_platforms', platform.owner_id);
    const version = this.state.registryProviderVersions.get(platform.version_id);
    if (!version || version.owner_id !== platform.owner_id) {
      throw new ConflictError('referenced_record_missing', 'the record refers to a record that does not exist');
    }
    const platforms = [...this.state.registryProviderPlatforms.values()];
    if (
      platforms.some((p) => p.version_id === platform.version_id && p.os === platform.os && p.arch === platform.arch)
    ) {
      throw new ConflictError('provider_platform_exists', "this provider version's build is already uploaded");
    }
    this.state.registryProviderPlatforms.set(platform.id, copy(platform));
    return copy(platform);
  }

  async addKey(key: RegistryGpgKey): Promise<RegistryGpgKey> {
    this.tx.checkWrite('registry_gpg_keys', key.owner_id);
    if ([...this.state.registryGpgKeys.values()].some((k) => k.owner_id === key.owner_id && k.key_id === key.key_id)) {
      throw new ConflictError('gpg_key_exists', 'the namespace already has this GPG key');
    }
    this.state.registryGpgKeys.set(key.id, copy(key));
    return copy(key);
  }

  async listKeys(ownerId: string): Promise<RegistryGpgKey[]> {
    return this.owned(this.state.registryGpgKeys, ownerId)
      .sort((a, b) =>
        a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.key_id < b.key_id ? -1 : 1,
      )
      .map(copy);
  }

  async deleteKey(ownerId: string, keyId: string): Promise<boolean> {
    const found = this.owned(this.state.registryGpgKeys, ownerId).find((key) => key.key_id === keyId);
    if (!found) return false;
    this.state.registryGpgKeys.delete(found.id);
    return true;
  }

  async storageKeys(ownerId: string): Promise<string[]> {
    return this.owned(this.state.registryProviderPlatforms, ownerId)
      .map((platform) => platform.storage_key)
      .sort();
  }

  private owned<T extends { owner_id: string }>(rows: Map<string, T>, ownerId: string): T[] {
    if (!this.tx.sees(ownerId)) return [];
    return [...rows.values()].filter((row) => row.owner_id === ownerId);
  }

  private withPlatforms(version: RegistryProviderVersion): RegistryProviderVersionWithPlatforms {
    const platforms = [...this.state.registryProviderPlatforms.values()]
      .filter((platform) => platform.version_id === version.id)
      .sort((a, b) => (`${a.os}_${a.arch}` < `${b.os}_${b.arch}` ? -1 : 1));
    return copy({ ...version, platforms });
  }
}
