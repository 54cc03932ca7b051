import type { Notification, NotificationDelivery } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { at, newUser, uuid } from './fixtures.js';
import { type OpenStoreHarness, useStoreSuite } from './harness.js';

export function newNotification(ownerId: string, overrides: Partial<Notification> = {}): Notification {
  return {
    id: uuid(),
    owner_id: ownerId,
    created_by: ownerId,
    org_id: null,
    name: 'ops',
    kind: 'webhook',
    url: 'https://hooks.example.com/trellis',
    events: ['job.failed', 'job.succeeded'],
    vineyard_id: null,
    secret_sealed: 'v1.sealed',
    created_at: at(1),
    ...overrides,
  };
}

export function newDelivery(
  notification: Notification,
  overrides: Partial<NotificationDelivery> = {},
): NotificationDelivery {
  return {
    id: uuid(),
    owner_id: notification.owner_id,
    notification_id: notification.id,
    event: 'job.failed',
    payload: { event: 'job.failed', job: { id: uuid() }, nested: [1, 'two', null] },
    status: 'pending',
    attempts: [],
    created_at: at(10),
    next_attempt_at: at(10),
    finished_at: null,
    ...overrides,
  };
}

export function describeNotificationStoreConformance(open: OpenStoreHarness): void {
  describe('NotificationStore', () => {
    const suite = useStoreSuite(open);
    const newOwner = () => suite.asSystem((stores) => stores.users.create(newUser()));

    it('creates, finds, pages and deletes notifications, each owner seeing only its own', async () => {
      const user = await newOwner();
      const other = await newOwner();
      const first = newNotification(user.id, { created_at: at(1) });
      const second = newNotification(user.id, { created_at: at(2), kind: 'slack', secret_sealed: null });
      await suite.asOwner(user.id, async (stores) => {
        expect(await stores.notifications.create(first)).toEqual(first);
        await stores.notifications.create(second);
      });
      const theirs = await suite.asOwner(other.id, (stores) => stores.notifications.create(newNotification(other.id)));
      expect(await suite.asOwner(user.id, (stores) => stores.notifications.find(first.id))).toEqual(first);
      expect(await suite.asOwner(user.id, (stores) => stores.notifications.find(theirs.id))).toBeNull();
      const page = await suite.asOwner(user.id, (stores) => stores.notifications.page(user.id, { limit: 1 }));
      expect(page.items).toEqual([second]);
      const rest = await suite.asOwner(user.id, (stores) =>
        stores.notifications.page(user.id, { limit: 1, after: page.next ?? undefined }),
      );
      expect(rest).toEqual({ items: [first], next: null });
      expect(await suite.asOwner(other.id, (stores) => stores.notifications.delete(user.id, first.id))).toBe(false);
      expect(await suite.asOwner(user.id, (stores) => stores.notifications.delete(user.id, first.id))).toBe(true);
      expect(await suite.asOwner(user.id, (stores) => stores.notifications.find(first.id))).toBeNull();
    });

    it('matches by event and vineyard', async () => {
      const user = await newOwner();
      const vineyardId = uuid();
      const all = newNotification(user.id, { events: ['job.failed'] });
      const one = newNotification(user.id, { events: ['job.failed', 'drift.detected'], vineyard_id: vineyardId });
      const succeeded = newNotification(user.id, { events: ['job.succeeded'] });
      await suite.asOwner(user.id, async (stores) => {
        for (const n of [all, one, succeeded]) await stores.notifications.create(n);
      });
      const ids = async (event: 'job.failed' | 'drift.detected', vineyard: string | null) =>
        (await suite.asOwner(user.id, (stores) => stores.notifications.listMatching(user.id, event, vineyard)))
          .map((n) => n.id)
          .sort();
      expect(await ids('job.failed', vineyardId)).toEqual([all.id, one.id].sort());
      expect(await ids('job.failed', uuid())).toEqual([all.id]);
      expect(await ids('drift.detected', vineyardId)).toEqual([one.id]);
      expect(await ids('drift.detected', null)).toEqual([]);
    });

    it('keeps deliveries in the outbox: claims due ones once, leases them, records attempts, and deletes them with their notification', async () => {
      const user = await newOwner();
      const notification = newNotification(user.id);
      const due = newDelivery(notification, { created_at: at(10), next_attempt_at: at(10) });
      const later = newDelivery(notification, { created_at: at(11), next_attempt_at: at(100) });
      const done = newDelivery(notification, { created_at: at(12), status: 'delivered', finished_at: at(12) });
      await suite.asOwner(user.id, async (stores) => {
        await stores.notifications.create(notification);
        for (const d of [due, later, done]) expect(await stores.outbox.add('notification', d)).toEqual(d);
      });
      const claimed = await suite.asSystem((stores) => stores.outbox.claimDue(at(50), at(60), 10));
      expect(claimed).toEqual([{ kind: 'notification', item: { ...due, next_attempt_at: at(60) } }]);
      expect(await suite.asSystem((stores) => stores.outbox.claimDue(at(55), at(65), 10))).toEqual([]);

      const attempt = { at: at(50), status_code: 503, error: 'HTTP 503', duration_ms: 12, response_excerpt: 'busy' };
      const recorded = await suite.asOwner(user.id, (stores) =>
        stores.outbox.recordAttempt('notification', user.id, due.id, attempt, {
          status: 'pending',
          next_attempt_at: at(70),
          finished_at: null,
        }),
      );
      expect(recorded).toEqual({ ...due, attempts: [attempt], next_attempt_at: at(70) });
      const again = await suite.asSystem((stores) => stores.outbox.claimDue(at(200), at(300), 1));
      expect(again.map((entry) => entry.item.id)).toEqual([due.id]);

      const page = await suite.asOwner(user.id, (stores) =>
        stores.outbox.pageDeliveries(user.id, notification.id, { limit: 10 }),
      );
      expect(page.items.map((d) => d.id)).toEqual([done.id, later.id, due.id]);
      expect(await suite.asSystem((stores) => stores.outbox.find('notification', due.id))).toEqual({
        ...due,
        attempts: [attempt],
        next_attempt_at: at(300),
      });
      await suite.asOwner(user.id, (stores) => stores.notifications.delete(user.id, notification.id));
      expect(await suite.asSystem((stores) => stores.outbox.find('notification', due.id))).toBeNull();
      expect(await suite.asSystem((stores) => stores.outbox.find('notification', done.id))).toBeNull();
    });
  });
}
