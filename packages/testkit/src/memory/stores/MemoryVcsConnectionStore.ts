import type { GitProvider, VcsConnection, VcsConnectionStore } from '@trellis/core';
import { copy } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

export class MemoryVcsConnectionStore implements VcsConnectionStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async put(connection: VcsConnection): Promise<VcsConnection> {
    this.tx.checkWrite('vcs_connections', connection.owner_id);
    const existing = this.tx.state.vcsConnections.get(connection.vine_id);
    const stored = existing ? { ...connection, created_at: existing.created_at } : connection;
    this.tx.state.vcsConnections.set(connection.vine_id, copy(stored));
    return copy(stored);
  }

  async get(ownerId: string, vineId: string): Promise<VcsConnection | null> {
    const connection = this.tx.state.vcsConnections.get(vineId);
    return connection && connection.owner_id === ownerId && this.tx.sees(ownerId) ? copy(connection) : null;
  }

  async delete(ownerId: string, vineId: string): Promise<boolean> {
    if ((await this.get(ownerId, vineId)) === null) return false;
    return this.tx.state.vcsConnections.delete(vineId);
  }

  async findForDelivery(vineId: string): Promise<VcsConnection | null> {
    const connection = this.tx.state.vcsConnections.get(vineId);
    return connection && this.tx.sees(connection.owner_id) ? copy(connection) : null;
  }

  async countManual(ownerId: string): Promise<number> {
    if (!this.tx.sees(ownerId)) return 0;
    return [...this.tx.state.vcsConnections.values()].filter(
      (c) => c.owner_id === ownerId && c.webhook_mode === 'manual',
    ).length;
  }

  async recordDelivery(provider: GitProvider, deliveryId: string, at: string): Promise<boolean> {
    const key = `${provider}:${deliveryId}`;
    if (this.tx.state.vcsDeliveries.has(key)) return false;
    this.tx.state.vcsDeliveries.set(key, at);
    return true;
  }
}
