import { type NewStateVersion, NotFoundError, type StateLock, type StateStore, type StateVersion } from '@trellis/core';
import { copy } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

export class MemoryStateStore implements StateStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async addVersion(version: NewStateVersion): Promise<StateVersion> {
    this.requireVine(version.owner_id, version.vine_id);
    const stored: StateVersion = {
      ...copy(version),
      after_lost: version.after_lost ?? false,
      rejected: version.rejected ?? false,
      reviewed_at: null,
      reviewed_by: null,
      id: this.tx.sequences.nextStateVersionId++,
    };
    this.tx.state.stateVersions.push(stored);
    return copy(stored);
  }

  async latest(ownerId: string, vineId: string): Promise<StateVersion | null> {
    return (await this.listVersions(ownerId, vineId)).find((version) => !version.rejected) ?? null;
  }

  async listVersions(ownerId: string, vineId: string): Promise<StateVersion[]> {
    if (!this.tx.sees(ownerId)) return [];
    return this.tx.state.stateVersions
      .filter((v) => v.owner_id === ownerId && v.vine_id === vineId)
      .sort((a, b) => b.id - a.id)
      .map(copy);
  }

  async getVersion(ownerId: string, id: number): Promise<StateVersion | null> {
    if (!this.tx.sees(ownerId)) return null;
    const found = this.tx.state.stateVersions.find((version) => version.owner_id === ownerId && version.id === id);
    return found ? copy(found) : null;
  }

  async findUpload(ownerId: string, uploadId: string): Promise<StateVersion | null> {
    if (!this.tx.sees(ownerId)) return null;
    const found = this.tx.state.stateVersions.find(
      (version) => version.owner_id === ownerId && version.upload_id === uploadId,
    );
    return found ? copy(found) : null;
  }

  async pruneVersions(ownerId: string, vineId: string, keep: number): Promise<string[]> {
    const prunable = (await this.listVersions(ownerId, vineId)).filter(
      (version) => !version.after_lost || version.reviewed_at !== null,
    );
    const pruned = prunable.slice(Math.max(0, keep));
    const ids = new Set(pruned.map((version) => version.id));
    this.tx.state.stateVersions = this.tx.state.stateVersions.filter((version) => !ids.has(version.id));
    return pruned.map((version) => version.storage_key);
  }

  async reviewAfterLost(ownerId: string, vineId: string, by: string, at: string): Promise<number> {
    if (!this.tx.sees(ownerId)) return 0;
    let reviewed = 0;
    for (const version of this.tx.state.stateVersions) {
      if (version.owner_id !== ownerId || version.vine_id !== vineId) continue;
      if (!version.after_lost || version.reviewed_at !== null) continue;
      version.reviewed_at = at;
      version.reviewed_by = by;
      reviewed += 1;
    }
    return reviewed;
  }

  async getLock(ownerId: string, vineId: string): Promise<StateLock | null> {
    const lock = this.tx.state.stateLocks.get(vineId);
    return lock && lock.owner_id === ownerId && this.tx.sees(ownerId) ? copy(lock) : null;
  }

  async acquireLock(lock: StateLock): Promise<{ acquired: true } | { acquired: false; current: StateLock }> {
    this.requireVine(lock.owner_id, lock.vine_id);
    const current = this.tx.state.stateLocks.get(lock.vine_id);
    if (current) return { acquired: false, current: copy(current) };
    this.tx.state.stateLocks.set(lock.vine_id, copy(lock));
    return { acquired: true };
  }

  async releaseLock(ownerId: string, vineId: string, lockId: string): Promise<boolean> {
    const current = await this.getLock(ownerId, vineId);
    if (!current || current.lock_id !== lockId) return false;
    this.tx.state.stateLocks.delete(vineId);
    return true;
  }

  private requireVine(ownerId: string, vineId: string): void {
    const vine = this.tx.state.vines.get(vineId);
    if (!vine || vine.owner_id !== ownerId || !this.tx.sees(ownerId)) throw new NotFoundError('configuration');
  }
}
