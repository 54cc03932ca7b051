import type { ModuleRepository, ModuleRepositoryStore, ModuleTagResult } from '@trellis/core';
import { copy } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

export class MemoryModuleRepositoryStore implements ModuleRepositoryStore {
  constructor(private readonly tx: MemoryTransaction) {}

  private rows(): Map<string, ModuleRepository> {
    return this.tx.state.moduleRepositories;
  }

  async put(connection: ModuleRepository): Promise<ModuleRepository> {
    this.tx.checkWrite('module_repositories', connection.owner_id);
    const existing = [...this.rows().values()].find(
      (row) => row.owner_id === connection.owner_id && row.name === connection.name && row.system === connection.system,
    );
    const stored = existing ? { ...connection, id: existing.id, created_at: existing.created_at } : connection;
    this.rows().set(stored.id, copy(stored));
    return copy(stored);
  }

  async get(ownerId: string, name: string, system: string): Promise<ModuleRepository | null> {
    if (!this.tx.sees(ownerId)) return null;
    const row = [...this.rows().values()].find((r) => r.owner_id === ownerId && r.name === name && r.system === system);
    return row ? copy(row) : null;
  }

  async list(ownerId: string): Promise<ModuleRepository[]> {
    if (!this.tx.sees(ownerId)) return [];
    return [...this.rows().values()]
      .filter((row) => row.owner_id === ownerId)
      .sort((a, b) => (a.name === b.name ? (a.system < b.system ? -1 : 1) : a.name < b.name ? -1 : 1))
      .map(copy);
  }

  async delete(ownerId: string, id: string): Promise<boolean> {
    const row = this.rows().get(id);
    if (!row || row.owner_id !== ownerId || !this.tx.sees(ownerId)) return false;
    return this.rows().delete(id);
  }

  async findForDelivery(id: string): Promise<ModuleRepository | null> {
    const row = this.rows().get(id);
    return row && this.tx.sees(row.owner_id) ? copy(row) : null;
  }

  async recordTag(ownerId: string, id: string, result: ModuleTagResult): Promise<void> {
    const row = this.rows().get(id);
    if (!row || row.owner_id !== ownerId || !this.tx.sees(ownerId)) return;
    this.tx.checkWrite('module_repositories', ownerId);
    row.last_tag = copy(result);
  }
}
