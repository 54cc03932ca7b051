import type {
  DeliveryAttempt,
  DeliveryStatus,
  Notification,
  NotificationDelivery,
  NotificationEvent,
} from '../domain/notifications.js';
import type { Page, PageRequest } from '../domain/pagination.js';
import type { OwnerIds } from './UnitOfWork.js';

/** How a delivery stands after an attempt. */
export interface DeliveryOutcome {
  status: DeliveryStatus;
  /** While `pending`: when to try again. */
  next_attempt_at: string;
  finished_at: string | null;
}

/**
 * Notifications and their deliveries (issue 14): the outbox. Rows belong to the notification's
 * owner; deleting a notification deletes its deliveries.
 */
export interface NotificationStore {
  create(notification: Notification): Promise<Notification>;
  /** The notification with this id among the rows the unit of work's scope sees. */
  find(id: string): Promise<Notification | null>;
  /** The owners' notifications, newest first. */
  page(owners: OwnerIds, request: PageRequest): Promise<Page<Notification>>;
  /** Deletes it and its deliveries; false when there was none. */
  delete(ownerId: string, id: string): Promise<boolean>;
  /** The owner's notifications that take `event` for this vineyard (or for every vineyard). */
  listMatching(ownerId: string, event: NotificationEvent, vineyardId: string | null): Promise<Notification[]>;
  addDelivery(delivery: NotificationDelivery): Promise<NotificationDelivery>;
  findDelivery(id: string): Promise<NotificationDelivery | null>;
  /** A notification's deliveries, newest first. */
  pageDeliveries(ownerId: string, notificationId: string, request: PageRequest): Promise<Page<NotificationDelivery>>;
  /**
   * System work: up to `limit` pending deliveries due at `now`, oldest due first, each moved to
   * `leaseUntil` so no other worker takes it while it is sent. On Postgres rows another
   * transaction holds are skipped (`FOR UPDATE SKIP LOCKED`), so replicas never take one twice.
   */
  claimDue(now: string, leaseUntil: string, limit: number): Promise<NotificationDelivery[]>;
  /** Appends an attempt and moves the delivery on; null when the delivery is gone. */
  recordAttempt(
    ownerId: string,
    id: string,
    attempt: DeliveryAttempt,
    outcome: DeliveryOutcome,
  ): Promise<NotificationDelivery | null>;
}
