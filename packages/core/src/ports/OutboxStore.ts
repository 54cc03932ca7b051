import type { NotificationDelivery } from '../domain/notifications.js';
import type { OutboxAttempts, OutboxEntry, OutboxItems, OutboxKind, OutboxOutcome } from '../domain/outbox.js';
import type { Page, PageRequest } from '../domain/pagination.js';
import type { VcsFeedbackItem } from '../domain/vcsFeedback.js';

/**
 * The transactional outbox (`domain/outbox.ts`): one table of rows of every kind, each owned by
 * its owner (the notification's, the job's). Written in the unit of work of the change it
 * reports; claimed, tried and moved on by the delivery task.
 */
export interface OutboxStore {
  /** Writes a pending row (a notification's delivery must belong to a notification of the same owner). */
  add<K extends OutboxKind>(kind: K, item: OutboxItems[K]): Promise<OutboxItems[K]>;
  /** The row of this kind and id among the rows the unit of work's scope sees. */
  find<K extends OutboxKind>(kind: K, id: string): Promise<OutboxItems[K] | null>;
  /**
   * System work: up to `limit` pending rows (of `kinds`, every kind when absent) due at `now`,
   * oldest due first, each moved to `leaseUntil` so no other worker takes it while it is sent;
   * answered in written order. On Postgres rows another transaction holds are skipped
   * (`FOR UPDATE SKIP LOCKED`), so replicas never take one twice.
   */
  claimDue(now: string, leaseUntil: string, limit: number, kinds?: readonly OutboxKind[]): Promise<OutboxEntry[]>;
  /** Appends an attempt (when given) and moves the row on; null when it is gone (or not the owner's). */
  recordAttempt<K extends OutboxKind>(
    kind: K,
    ownerId: string,
    id: string,
    attempt: OutboxAttempts[K] | null,
    outcome: OutboxOutcome<K>,
  ): Promise<OutboxItems[K] | null>;
  /** A notification's deliveries, newest first. */
  pageDeliveries(ownerId: string, notificationId: string, request: PageRequest): Promise<Page<NotificationDelivery>>;
  /** A job's git provider feedback, oldest first. */
  listVcsFeedback(ownerId: string, jobId: string): Promise<VcsFeedbackItem[]>;
  /** Whether feedback of the same vine and subject was written after this one. */
  hasNewerVcsFeedback(item: Pick<VcsFeedbackItem, 'owner_id' | 'id' | 'vine_id' | 'subject'>): Promise<boolean>;
}
