/** Notifications (issue 14): `POST/GET /api/notifications`, `{id}`, `{id}/test`, `{id}/deliveries`. */
import { DELIVERY_STATUSES, MAX_NOTIFICATION_URL_LENGTH, NOTIFICATION_EVENTS, NOTIFICATION_KINDS } from '@trellis/core';
import { z } from 'zod';
import { isoTime, jsonObject, PageQuery, recordName, uuid } from './common.js';
import { OrgFilter } from './orgs.js';

export const NotificationEventSchema = z.enum(NOTIFICATION_EVENTS);

export const CreateNotificationBody = z.object({
  name: recordName,
  kind: z.enum(NOTIFICATION_KINDS).describe('`webhook`: signed JSON; `slack`: a Slack incoming-webhook message'),
  url: z
    .string()
    .max(MAX_NOTIFICATION_URL_LENGTH)
    .describe('https:// only; private, loopback and link-local addresses are refused (`notification_url_refused`)'),
  events: z.array(NotificationEventSchema).min(1),
  vineyard_id: z.uuid().optional().describe("only this vineyard's events (absent: every vineyard of the owner)"),
  org_id: z.uuid().optional().describe("an organization's notification (needs its admin role); absent: yours"),
});

export const ListNotificationsQuery = PageQuery.extend({ org_id: OrgFilter });

export const NotificationRecord = z.object({
  id: uuid,
  name: z.string(),
  kind: z.enum(NOTIFICATION_KINDS),
  url: z
    .string()
    .describe(
      'the receiver: in full for those who manage the owner’s notifications (admins); for anyone else only scheme and host, `https://hooks.slack.com/…` (a Slack or webhook URL is a credential)',
    ),
  url_masked: z.boolean().describe('true when `url` shows only scheme and host'),
  events: z.array(NotificationEventSchema),
  vineyard_id: uuid.nullable(),
  org_id: uuid.nullable(),
  created_at: isoTime,
});

export const CreatedNotificationRecord = NotificationRecord.extend({
  secret: z
    .string()
    .nullable()
    .describe('the signing secret of a webhook (`X-Trellis-Signature`), shown only once; null for Slack'),
});

export const NotificationList = z.object({ notifications: z.array(NotificationRecord) });

export const DeliveryAttemptRecord = z.object({
  at: isoTime,
  status_code: z.number().int().nullable().describe("the receiver's HTTP status; null when none came"),
  error: z.string().nullable(),
  duration_ms: z.number().int(),
  response_excerpt: z.string().nullable().describe("the first bytes of the receiver's answer"),
});

export const DeliveryRecord = z.object({
  id: uuid.describe('`X-Trellis-Delivery`: the same on every retry'),
  notification_id: uuid,
  owner_id: uuid,
  event: z.string(),
  payload: jsonObject.describe('the JSON body a webhook receives'),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.array(DeliveryAttemptRecord),
  created_at: isoTime,
  next_attempt_at: isoTime,
  finished_at: isoTime.nullable(),
});

export const DeliveryList = z.object({ deliveries: z.array(DeliveryRecord) });
