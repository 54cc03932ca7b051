import {
  ConflictError,
  type DeliveryAttempt,
  type DeliveryOutcome,
  type Notification,
  type NotificationDelivery,
  type NotificationEvent,
  type NotificationStore,
  type OwnerIds,
  ownerList,
  type Page,
  type PageRequest,
} from '@trellis/core';
import { copy, oldestFirst, pageNewestFirst } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

export class MemoryNotificationStore implements NotificationStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async create(notification: Notification): Promise<Notification> {
    this.tx.checkWrite('notifications', notification.owner_id);
    if (this.tx.state.notifications.has(notification.id)) {
      throw new ConflictError('already_exists', 'a record with the same key already exists');
    }
    this.tx.state.notifications.set(notification.id, copy(notification));
    return copy(notification);
  }

  async find(id: string): Promise<Notification | null> {
    const found = this.tx.state.notifications.get(id);
    return found && this.tx.sees(found.owner_id) ? copy(found) : null;
  }

  async page(owners: OwnerIds, request: PageRequest): Promise<Page<Notification>> {
    const visible = ownerList(owners).filter((owner) => this.tx.sees(owner));
    return pageNewestFirst(
      this.tx.state.notifications,
      (notification) => visible.includes(notification.owner_id),
      (notification) => notification.created_at,
      request,
    );
  }

  async delete(ownerId: string, id: string): Promise<boolean> {
    const found = this.tx.state.notifications.get(id);
    if (!found || found.owner_id !== ownerId || !this.tx.sees(ownerId)) return false;
    this.tx.state.notifications.delete(id);
    for (const [key, delivery] of this.tx.state.notificationDeliveries) {
      if (delivery.notification_id === id) this.tx.state.notificationDeliveries.delete(key);
    }
    return true;
  }

  async listMatching(ownerId: string, event: NotificationEvent, vineyardId: string | null): Promise<Notification[]> {
    if (!this.tx.sees(ownerId)) return [];
    return [...this.tx.state.notifications.values()]
      .filter(
        (notification) =>
          notification.owner_id === ownerId &&
          notification.events.includes(event) &&
          (notification.vineyard_id === null || notification.vineyard_id === vineyardId),
      )
      .map(copy);
  }

  async addDelivery(delivery: NotificationDelivery): Promise<NotificationDelivery> {
    this.tx.checkWrite('notification_deliveries', delivery.owner_id);
    const notification = this.tx.state.notifications.get(delivery.notification_id);
    if (!notification || notification.owner_id !== delivery.owner_id) {
      throw new Error('a delivery must belong to a notification of the same owner');
    }
    this.tx.state.notificationDeliveries.set(delivery.id, copy(delivery));
    return copy(delivery);
  }

  async findDelivery(id: string): Promise<NotificationDelivery | null> {
    const found = this.tx.state.notificationDeliveries.get(id);
    return found && this.tx.sees(found.owner_id) ? copy(found) : null;
  }

  async pageDeliveries(
    ownerId: string,
    notificationId: string,
    request: PageRequest,
  ): Promise<Page<NotificationDelivery>> {
    if (!this.tx.sees(ownerId)) return { items: [], next: null };
    return pageNewestFirst(
      this.tx.state.notificationDeliveries,
      (delivery) => delivery.owner_id === ownerId && delivery.notification_id === notificationId,
      (delivery) => delivery.created_at,
      request,
    );
  }

  async claimDue(now: string, leaseUntil: string, limit: number): Promise<NotificationDelivery[]> {
    const due = oldestFirst(
      [...this.tx.state.notificationDeliveries.values()].filter(
        (delivery) =>
          this.tx.sees(delivery.owner_id) &&
          delivery.status === 'pending' &&
          Date.parse(delivery.next_attempt_at) <= Date.parse(now),
      ),
      (delivery) => delivery.next_attempt_at,
    ).slice(0, limit);
    for (const delivery of due) delivery.next_attempt_at = leaseUntil;
    return oldestFirst(due, (delivery) => delivery.created_at).map(copy);
  }

  async recordAttempt(
    ownerId: string,
    id: string,
    attempt: DeliveryAttempt,
    outcome: DeliveryOutcome,
  ): Promise<NotificationDelivery | null> {
    const delivery = this.tx.state.notificationDeliveries.get(id);
    if (!delivery || delivery.owner_id !== ownerId || !this.tx.sees(ownerId)) return null;
    delivery.attempts.push(copy(attempt));
    delivery.status = outcome.status;
    delivery.next_attempt_at = outcome.next_attempt_at;
    delivery.finished_at = outcome.finished_at;
    return copy(delivery);
  }
}
