import {
  type NotificationDelivery,
  OUTBOX_KINDS,
  type OutboxAttempts,
  type OutboxEntry,
  type OutboxItems,
  type OutboxKind,
  type OutboxOutcome,
  type OutboxStore,
  type Page,
  type PageRequest,
  type VcsFeedbackItem,
} from '@trellis/core';
import { copy, oldestFirst, pageNewestFirst } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

/** The outbox in memory: one map of entries in written order, as the table's `seq` orders rows. */
export class MemoryOutboxStore implements OutboxStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async add<K extends OutboxKind>(kind: K, item: OutboxItems[K]): Promise<OutboxItems[K]> {
    this.tx.checkWrite('outbox', item.owner_id);
    if (this.tx.state.outbox.has(item.id)) throw new Error(`outbox ${item.id} exists`);
    const entry = { kind, item: copy(item) } as OutboxEntry;
    if (entry.kind === 'notification') {
      const notification = this.tx.state.notifications.get(entry.item.notification_id);
      if (!notification || notification.owner_id !== entry.item.owner_id) {
        throw new Error('a delivery must belong to a notification of the same owner');
      }
    }
    this.tx.state.outbox.set(item.id, entry);
    return copy(item);
  }

  async find<K extends OutboxKind>(kind: K, id: string): Promise<OutboxItems[K] | null> {
    const entry = this.tx.state.outbox.get(id);
    return entry && entry.kind === kind && this.tx.sees(entry.item.owner_id)
      ? (copy(entry.item) as OutboxItems[K])
      : null;
  }

  async claimDue(
    now: string,
    leaseUntil: string,
    limit: number,
    kinds: readonly OutboxKind[] = OUTBOX_KINDS,
  ): Promise<OutboxEntry[]> {
    const due = oldestFirst(
      [...this.tx.state.outbox.values()].filter(
        (entry) =>
          kinds.includes(entry.kind) &&
          this.tx.sees(entry.item.owner_id) &&
          entry.item.status === 'pending' &&
          Date.parse(entry.item.next_attempt_at) <= Date.parse(now),
      ),
      (entry) => entry.item.next_attempt_at,
    ).slice(0, limit);
    for (const entry of due) entry.item.next_attempt_at = leaseUntil;
    // Written order: a job's pending status before its end status.
    const order = [...this.tx.state.outbox.keys()];
    return due.sort((a, b) => order.indexOf(a.item.id) - order.indexOf(b.item.id)).map(copy);
  }

  async recordAttempt<K extends OutboxKind>(
    kind: K,
    ownerId: string,
    id: string,
    attempt: OutboxAttempts[K] | null,
    outcome: OutboxOutcome<K>,
  ): Promise<OutboxItems[K] | null> {
    const entry = this.tx.state.outbox.get(id);
    if (!entry || entry.kind !== kind || entry.item.owner_id !== ownerId || !this.tx.sees(ownerId)) return null;
    const item = entry.item as {
      attempts: unknown[];
      status: string;
      next_attempt_at: string;
      finished_at: string | null;
    };
    if (attempt) item.attempts.push(copy(attempt));
    item.status = outcome.status;
    item.next_attempt_at = outcome.next_attempt_at;
    item.finished_at = outcome.finished_at;
    return copy(entry.item) as OutboxItems[K];
  }

  async pageDeliveries(
    ownerId: string,
    notificationId: string,
    request: PageRequest,
  ): Promise<Page<NotificationDelivery>> {
    if (!this.tx.sees(ownerId)) return { items: [], next: null };
    return pageNewestFirst(
      this.ofKind('notification'),
      (delivery) => delivery.owner_id === ownerId && delivery.notification_id === notificationId,
      (delivery) => delivery.created_at,
      request,
    );
  }

  async listVcsFeedback(ownerId: string, jobId: string): Promise<VcsFeedbackItem[]> {
    if (!this.tx.sees(ownerId)) return [];
    return [...this.ofKind('vcs_feedback').values()]
      .filter((item) => item.owner_id === ownerId && item.job_id === jobId)
      .map(copy);
  }

  async hasNewerVcsFeedback(item: Pick<VcsFeedbackItem, 'owner_id' | 'id' | 'vine_id' | 'subject'>): Promise<boolean> {
    let after = false;
    for (const other of this.ofKind('vcs_feedback').values()) {
      if (other.id === item.id) {
        after = true;
        continue;
      }
      if (
        after &&
        other.owner_id === item.owner_id &&
        other.vine_id === item.vine_id &&
        other.subject === item.subject &&
        this.tx.sees(other.owner_id)
      ) {
        return true;
      }
    }
    return false;
  }

  /** The rows of one kind, in written order (the live rows, not copies). */
  private ofKind<K extends OutboxKind>(kind: K): Map<string, OutboxItems[K]> {
    const rows = new Map<string, OutboxItems[K]>();
    for (const [id, entry] of this.tx.state.outbox) if (entry.kind === kind) rows.set(id, entry.item as OutboxItems[K]);
    return rows;
  }
}
