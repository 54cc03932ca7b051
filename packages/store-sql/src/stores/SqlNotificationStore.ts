import {
  type DeliveryAttempt,
  type DeliveryOutcome,
  isOneOf,
  NOTIFICATION_KINDS,
  type Notification,
  type NotificationDelivery,
  type NotificationEvent,
  type NotificationStore,
  type OwnerIds,
  ownerList,
  type Page,
  type PageRequest,
  DELIVERY_STATUSES,
} from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import {
  jsonIn,
  jsonOut,
  type Row,
  textOut,
  textOutOrNull,
  timeIn,
  timeInOrNull,
  timeOut,
  timeOutOrNull,
  uuidOut,
  uuidOutOrNull,
} from '../rows.js';
import { keysetPage } from './keysetPage.js';
import { claimDueOutboxRows } from './outbox.js';

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
    // Deliveries first: SQLite enforces the cascade only with foreign keys on.
    await this.db.table('notification_deliveries').where({ owner_id: ownerId, notification_id: id }).delete();
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

  async addDelivery(delivery: NotificationDelivery): Promise<NotificationDelivery> {
    const [row] = await this.db
      .insert('notification_deliveries', {
        id: delivery.id,
        owner_id: delivery.owner_id,
        notification_id: delivery.notification_id,
        event: delivery.event,
        payload: jsonIn(delivery.payload),
        status: delivery.status,
        attempts: jsonIn(delivery.attempts),
        created_at: timeIn(delivery.created_at),
        next_attempt_at: timeIn(delivery.next_attempt_at),
        finished_at: timeInOrNull(delivery.finished_at),
      })
      .returning('*');
    return toDelivery(row);
  }

  async findDelivery(id: string): Promise<NotificationDelivery | null> {
    const row = await this.db.table('notification_deliveries').where({ id }).first();
    return row ? toDelivery(row) : null;
  }

  async pageDeliveries(
    ownerId: string,
    notificationId: string,
    request: PageRequest,
  ): Promise<Page<NotificationDelivery>> {
    return keysetPage(
      this.db.table('notification_deliveries').where({ owner_id: ownerId, notification_id: notificationId }),
      'created_at',
      request,
      toDelivery,
    );
  }

  async claimDue(now: string, leaseUntil: string, limit: number): Promise<NotificationDelivery[]> {
    const rows = await claimDueOutboxRows(this.db, 'notification_deliveries', now, leaseUntil, limit);
    return rows.map(toDelivery).sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  async recordAttempt(
    ownerId: string,
    id: string,
    attempt: DeliveryAttempt,
    outcome: DeliveryOutcome,
  ): Promise<NotificationDelivery | null> {
    const current = await this.db
      .lockForUpdate(this.db.table('notification_deliveries').where({ owner_id: ownerId, id }))
      .first();
    if (!current) return null;
    const attempts = [...jsonOut<DeliveryAttempt[]>(current.attempts), attempt];
    const [row] = await this.db
      .table('notification_deliveries')
      .where({ owner_id: ownerId, id })
      .update({
        attempts: jsonIn(attempts),
        status: outcome.status,
        next_attempt_at: timeIn(outcome.next_attempt_at),
        finished_at: timeInOrNull(outcome.finished_at),
      })
      .returning('*');
    return row ? toDelivery(row) : null;
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

function toDelivery(row: Row): NotificationDelivery {
  const status = textOut(row.status);
  if (!isOneOf(DELIVERY_STATUSES, status)) {
    throw new TypeError(`notification_deliveries.status holds an unknown status: ${status}`);
  }
  return {
    id: uuidOut(row.id),
    owner_id: uuidOut(row.owner_id),
    notification_id: uuidOut(row.notification_id),
    event: textOut(row.event) as NotificationDelivery['event'],
    payload: jsonOut(row.payload),
    status,
    attempts: jsonOut<DeliveryAttempt[]>(row.attempts),
    created_at: timeOut(row.created_at),
    next_attempt_at: timeOut(row.next_attempt_at),
    finished_at: timeOutOrNull(row.finished_at),
  };
}
