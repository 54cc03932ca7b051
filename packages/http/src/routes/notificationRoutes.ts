import type { UseCases } from '@trellis/core';
import { pagedList } from '../routing/pagedList.js';
import { implement, type RouteSpec } from '../routing/route.js';
import { operations } from '@trellis/contract';

/** Notifications and their deliveries (issue 14, docs/notifications.md). */
export function notificationRoutes(useCases: UseCases): RouteSpec[] {
  return [
    implement(operations.createNotification, async ({ user, body }) => ({
      status: 201,
      body: await useCases.notifications.create(user, body),
    })),
    implement(operations.listNotifications, async ({ req, user, query }) =>
      pagedList(req, 'notifications', await useCases.notifications.list(user, query)),
    ),
    implement(operations.getNotification, async ({ user, params }) => ({
      status: 200,
      body: await useCases.notifications.get(user, params.id),
    })),
    implement(operations.deleteNotification, async ({ user, params }) => {
      await useCases.notifications.delete(user, params.id);
      return { status: 204 };
    }),
    implement(operations.testNotification, async ({ user, params }) => ({
      status: 200,
      body: await useCases.notifications.test(user, params.id),
    })),
    implement(operations.listNotificationDeliveries, async ({ req, user, params, query }) =>
      pagedList(req, 'deliveries', await useCases.notifications.deliveries(user, params.id, query)),
    ),
  ];
}
