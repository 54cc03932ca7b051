import type { Notification, NotificationEvent } from '../domain/notifications.js';
import type { OutboxOutcome } from '../domain/outbox.js';
import type { Page, PageRequest } from '../domain/pagination.js';
import type { OwnerIds } from './UnitOfWork.js';

/** How a delivery stands after an attempt. */
export type DeliveryOutcome = OutboxOutcome<'notification'>;

/**
 * Notifications (issue 14): who is told of what. Rows belong to the notification's owner; their
 * deliveries are `notification` rows of the outbox (`OutboxStore`), deleted with it.
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
}
