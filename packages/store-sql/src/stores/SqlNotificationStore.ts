import {
  isOneOf,
  NOTIFICATION_KINDS,
  type Notification,
  type NotificationEvent,
  type NotificationStore,
  type OwnerIds,
  ownerList,
  type Page,
  type PageRequest,
} from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { jsonIn, jsonOut, type Row, textOut, textOutOrNull, timeIn, timeOut, uuidOut, uuidOutOrNull } from '../rows.js';
import { keysetPage } from './keysetPage.js';

export class SqlNotificationStore implements NotificationStore {
  constructor(private readonly db: SqlSession) {}

  async create(notification: Notification): Promise<Notification> {
    const [row] = await this.db
      .insert('notifications', {
        id: notification.id,
        owner_id: notification.owner_id,
        created_by: notification.created_by,
        org_id: notification.org_id,
        name: notification.name,
        kind: notification.kind,
        url: notification.url,
        events: jsonIn(notification.events),
        vineyard_id: notification.vineyard_id,
        secret_sealed: notification.secret_sealed,
        created_at: timeIn(notification.created_at),
      })
      .returning('*');
    return toNotification(row);
  }

  async find(id: string): Promise<Notification | null> {
    const row = await this.db.table('notifications').where({ id }).first();
    return row ? toNotification(row) : null;
  }

  async page(owners: OwnerIds, request: PageRequest): Promise<Page<Notification>> {
    return keysetPage(
      this.db.table('notifications').whereIn('owner_id', ownerList(owners)),
      'created_at',
      request,
      toNotification,
    );
  }

  async delete(ownerId: string, id: string): Promise<boolean> {
    // Deliveries (outbox rows) first: SQLite enforces the cascade only with foreign keys on.
    await this.db.table('outbox').where({ kind: 'notification', owner_id: ownerId, notification_id: id }).delete();
    return (await this.db.table('notifications').where({ owner_id: ownerId, id }).delete()) > 0;
  }

  async listMatching(ownerId: string, event: NotificationEvent, vineyardId: string | null): Promise<Notification[]> {
    const rows: Row[] = await this.db.table('notifications').where({ owner_id: ownerId }).orderBy('seq');
    return rows
      .map(toNotification)
      .filter(
        (notification) =>
          notification.events.includes(event) &&
          (notification.vineyard_id === null || notification.vineyard_id === vineyardId),
      );
  }
}

function toNotification(row: Row): Notification {
  const kind = textOut(row.kind);
  if (!isOneOf(NOTIFICATION_KINDS, kind)) throw new TypeError(`notifications.kind holds an unknown kind: ${kind}`);
  return {
    id: uuidOut(row.id),
    owner_id: uuidOut(row.owner_id),
    created_by: uuidOut(row.created_by),
    org_id: uuidOutOrNull(row.org_id),
    name: textOut(row.name),
    kind,
    url: textOut(row.url),
    events: jsonOut<NotificationEvent[]>(row.events),
    vineyard_id: uuidOutOrNull(row.vineyard_id),
    secret_sealed: textOutOrNull(row.secret_sealed),
    created_at: timeOut(row.created_at),
  };
}
