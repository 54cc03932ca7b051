import { type ConfigurationVersion, type ConfigurationVersionStore, NotFoundError } from '@trellis/core';
import { copy } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

export class MemoryConfigurationVersionStore implements ConfigurationVersionStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async save(version: ConfigurationVersion): Promise<ConfigurationVersion> {
    const vine = this.tx.state.vines.get(version.vine_id);
    // Only a vine of the version's owner has versions.
    if (!vine || vine.owner_id !== version.owner_id || !this.tx.sees(version.owner_id)) {
      throw new NotFoundError('configuration');
    }
    this.tx.state.configurationVersions.set(version.id, copy(version));
    return copy(version);
  }

  async get(ownerId: string, id: string): Promise<ConfigurationVersion | null> {
    const version = this.tx.state.configurationVersions.get(id);
    return version && version.owner_id === ownerId && this.tx.sees(ownerId) ? copy(version) : null;
  }

  async findUploaded(ownerId: string, vineId: string, commitSha: string): Promise<ConfigurationVersion | null> {
    if (!this.tx.sees(ownerId)) return null;
    let newest: ConfigurationVersion | null = null;
    for (const version of this.tx.state.configurationVersions.values()) {
      if (
        version.owner_id === ownerId &&
        version.vine_id === vineId &&
        version.commit_sha === commitSha &&
        version.status === 'uploaded' &&
        (newest === null || version.created_at >= newest.created_at)
      ) {
        newest = version;
      }
    }
    return newest ? copy(newest) : null;
  }

  async startUpload(ownerId: string, id: string, at: string): Promise<boolean> {
    const version = this.tx.state.configurationVersions.get(id);
    if (!version || version.owner_id !== ownerId || !this.tx.sees(ownerId)) return false;
    if (version.status !== 'pending' || version.upload_started_at !== null) return false;
    this.tx.state.configurationVersions.set(id, { ...version, upload_started_at: at });
    return true;
  }

  async listForVine(ownerId: string, vineId: string, limit: number): Promise<ConfigurationVersion[]> {
    if (!this.tx.sees(ownerId)) return [];
    return [...this.tx.state.configurationVersions.values()]
      .filter((version) => version.owner_id === ownerId && version.vine_id === vineId)
      .sort((a, b) =>
        a.created_at === b.created_at ? b.id.localeCompare(a.id) : b.created_at.localeCompare(a.created_at),
      )
      .slice(0, limit)
      .map(copy);
  }

  async storageKeys(ownerId: string): Promise<string[]> {
    if (!this.tx.sees(ownerId)) return [];
    return [...this.tx.state.configurationVersions.values()]
      .filter((version) => version.owner_id === ownerId && version.storage_key !== null)
      .map((version) => version.storage_key as string);
  }
}
