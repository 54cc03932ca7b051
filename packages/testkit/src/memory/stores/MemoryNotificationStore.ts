import {
  ConflictError,
  type Notification,
  type NotificationEvent,
  type NotificationStore,
  type OwnerIds,
  ownerList,
  type Page,
  type PageRequest,
} from '@trellis/core';
import { copy, pageNewestFirst } from '../MemoryState.js';
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
    for (const [key, entry] of this.tx.state.outbox) {
      if (entry.kind === 'notification' && entry.item.notification_id === id) this.tx.state.outbox.delete(key);
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
}
