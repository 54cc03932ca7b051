import {
  type AuditEntry,
  type AuditFilter,
  type AuditStore,
  ConflictError,
  type Page,
  type PageRequest,
} from '@trellis/core';
import { copy, pageNewestFirst } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

export class MemoryAuditStore implements AuditStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async append(entry: AuditEntry): Promise<void> {
    const { audit } = this.tx.state;
    this.tx.checkWrite('audit_entries', entry.owner_id);
    if (audit.has(entry.id)) throw new ConflictError('already_exists', 'a record with the same key already exists');
    audit.set(entry.id, copy(entry));
  }

  async page(ownerId: string, filter: AuditFilter, request: PageRequest): Promise<Page<AuditEntry>> {
    if (!this.tx.sees(ownerId)) return { items: [], next: null };
    return pageNewestFirst(
      this.tx.state.audit,
      (entry) =>
        entry.owner_id === ownerId &&
        (filter.action === undefined || entry.action === filter.action) &&
        (filter.actor === undefined || entry.actor.id === filter.actor || entry.actor.email === filter.actor) &&
        (filter.target_id === undefined || entry.target.id === filter.target_id),
      (entry) => entry.at,
      request,
    );
  }

  async pruneOlderThan(before: string): Promise<number> {
    if (this.tx.scope.kind !== 'system') throw new Error('pruning the audit log is system work');
    const { audit } = this.tx.state;
    let pruned = 0;
    for (const [id, entry] of audit) {
      if (Date.parse(entry.at) < Date.parse(before)) {
        audit.delete(id);
        pruned += 1;
      }
    }
    return pruned;
  }
}
