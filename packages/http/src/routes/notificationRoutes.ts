import type { UseCases } from '@trellis/core';
import {
  CreatedNotificationRecord,
  CreateNotificationBody,
  DeliveryList,
  DeliveryRecord,
  IdParams,
  ListNotificationsQuery,
  NotificationList,
  NotificationRecord,
  PageQuery,
} from '@trellis/contract';
import { PAGED_LIST_DESCRIPTION, PAGED_LIST_HEADERS, pagedList } from '../routing/pagedList.js';
import { defineRoute, type RouteSpec } from '../routing/route.js';

/** Notifications and their deliveries (issue 14, docs/notifications.md). */
export function notificationRoutes(useCases: UseCases): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/notifications',
      operationId: 'createNotification',
      summary: 'Create a notification (a webhook or a Slack incoming webhook)',
      description:
        "Personal, or an organization's with `org_id` (needs the admin role). A webhook's signing secret is " +
        'in this answer only. The URL must be https:// and reach no private, loopback or link-local address.',
      tags: ['notifications'],
      auth: 'user',
      body: CreateNotificationBody,
      responses: {
        201: { description: 'The notification, with the secret shown only once', schema: CreatedNotificationRecord },
      },
      handler: async ({ user, body }) => ({ status: 201, body: await useCases.notifications.create(user, body) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/notifications',
      operationId: 'listNotifications',
      summary: "Your notifications and your organizations', newest first (never a secret)",
      description: PAGED_LIST_DESCRIPTION,
      tags: ['notifications'],
      auth: 'user',
      query: ListNotificationsQuery,
      responses: {
        200: { description: 'A page of notifications', schema: NotificationList, headers: PAGED_LIST_HEADERS },
      },
      handler: async ({ req, user, query }) =>
        pagedList(req, 'notifications', await useCases.notifications.list(user, query)),
    }),
    defineRoute({
      method: 'get',
      path: '/api/notifications/{id}',
      operationId: 'getNotification',
      summary: 'A notification',
      tags: ['notifications'],
      auth: 'user',
      params: IdParams,
      responses: { 200: { description: 'The notification', schema: NotificationRecord } },
      handler: async ({ user, params }) => ({ status: 200, body: await useCases.notifications.get(user, params.id) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/notifications/{id}',
      operationId: 'deleteNotification',
      summary: 'Delete a notification and its deliveries',
      tags: ['notifications'],
      auth: 'user',
      params: IdParams,
      responses: { 204: { description: 'Deleted: nothing more is sent' } },
      handler: async ({ user, params }) => {
        await useCases.notifications.delete(user, params.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/notifications/{id}/test',
      operationId: 'testNotification',
      summary: 'Send a test delivery now',
      description:
        'A `notification.test` delivery, tried at once; its first attempt is in the answer. A retryable ' +
        'failure is retried like any delivery.',
      tags: ['notifications'],
      auth: 'user',
      params: IdParams,
      responses: { 200: { description: 'The delivery and its first attempt', schema: DeliveryRecord } },
      handler: async ({ user, params }) => ({ status: 200, body: await useCases.notifications.test(user, params.id) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/notifications/{id}/deliveries',
      operationId: 'listNotificationDeliveries',
      summary: "A notification's deliveries, newest first, each with every attempt",
      description: PAGED_LIST_DESCRIPTION,
      tags: ['notifications'],
      auth: 'user',
      params: IdParams,
      query: PageQuery,
      responses: { 200: { description: 'A page of deliveries', schema: DeliveryList, headers: PAGED_LIST_HEADERS } },
      handler: async ({ req, user, params, query }) =>
        pagedList(req, 'deliveries', await useCases.notifications.deliveries(user, params.id, query)),
    }),
  ];
}
