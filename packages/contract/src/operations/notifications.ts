/** Notification destinations and deliveries: each operation as data (served by `http/src/routes/notificationRoutes.ts`). */
import { operation } from '../operation.js';
import { PAGED_LIST_DESCRIPTION, PAGED_LIST_HEADERS } from '../paging.js';
import {
  CreateNotificationBody,
  CreatedNotificationRecord,
  DeliveryList,
  DeliveryRecord,
  IdParams,
  ListNotificationsQuery,
  NotificationList,
  NotificationRecord,
  PageQuery,
} from '../schemas.js';

export const createNotification = operation({
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
});

export const listNotifications = operation({
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
});

export const getNotification = operation({
  method: 'get',
  path: '/api/notifications/{id}',
  operationId: 'getNotification',
  summary: 'A notification',
  tags: ['notifications'],
  auth: 'user',
  params: IdParams,
  responses: { 200: { description: 'The notification', schema: NotificationRecord } },
});

export const deleteNotification = operation({
  method: 'delete',
  path: '/api/notifications/{id}',
  operationId: 'deleteNotification',
  summary: 'Delete a notification and its deliveries',
  tags: ['notifications'],
  auth: 'user',
  params: IdParams,
  responses: { 204: { description: 'Deleted: nothing more is sent' } },
});

export const testNotification = operation({
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
});

export const listNotificationDeliveries = operation({
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
});

/** In the order the API reference lists them. */
export const notificationsOperations = {
  createNotification,
  listNotifications,
  getNotification,
  deleteNotification,
  testNotification,
  listNotificationDeliveries,
};
