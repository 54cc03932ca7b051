import type {
  DeliveryEvent,
  Notification,
  NotificationDelivery,
  NotificationEvent,
  NotificationSettings,
} from '../domain/notifications.js';
import type { Job, JsonObject } from '../domain/records.js';
import type { Clock } from '../ports/Clock.js';
import type { Random } from '../ports/Random.js';
import type { Stores } from '../ports/UnitOfWork.js';
import type { JobHook } from '../jobs/hooks.js';

/** What happened, to whom: the input of `enqueueNotification`. */
export interface NotificationEventInput {
  event: NotificationEvent;
  owner_id: string;
  job_id: string | null;
  vine_id: string | null;
  vineyard_id: string | null;
}

export interface OutboxDeps {
  clock: Clock;
  random: Random;
  settings: { notifications: NotificationSettings };
}

/**
 * The transactional outbox (issues 14, 24): records `input.event` for delivery to every
 * notification of the owner that takes it, as `notification` rows of the outbox in the caller's
 * unit of work, so the deliveries commit with the change or not at all. The body is fixed now (the job, vine and vineyard as they are in this
 * transaction). Returns the deliveries written (none when no notification matches).
 */
export async function enqueueNotification(
  stores: Stores,
  deps: OutboxDeps,
  input: NotificationEventInput,
): Promise<NotificationDelivery[]> {
  const matching = await stores.notifications.listMatching(input.owner_id, input.event, input.vineyard_id);
  if (matching.length === 0) return [];
  const payload = await eventPayload(stores, deps, input);
  const written: NotificationDelivery[] = [];
  for (const notification of matching) {
    written.push(await stores.outbox.add('notification', newDelivery(deps, notification, input.event, payload)));
  }
  return written;
}

/** A pending delivery of `payload` to `notification`, due at once. */
export function newDelivery(
  deps: Pick<OutboxDeps, 'clock' | 'random'>,
  notification: Notification,
  event: DeliveryEvent,
  payload: JsonObject,
): NotificationDelivery {
  const now = deps.clock.now().toISOString();
  return {
    id: deps.random.uuid(),
    owner_id: notification.owner_id,
    notification_id: notification.id,
    event,
    payload,
    status: 'pending',
    attempts: [],
    created_at: now,
    next_attempt_at: now,
    finished_at: null,
  };
}

/** `{ event, occurred_at, job, vine, vineyard, url }`: what a webhook receives. */
async function eventPayload(stores: Stores, deps: OutboxDeps, input: NotificationEventInput): Promise<JsonObject> {
  const job = input.job_id === null ? null : await stores.jobs.get(input.owner_id, input.job_id);
  const vine = input.vine_id === null ? null : await stores.vines.get(input.owner_id, input.vine_id);
  const vineyard = input.vineyard_id === null ? null : await stores.vineyards.get(input.owner_id, input.vineyard_id);
  return {
    event: input.event,
    occurred_at: deps.clock.now().toISOString(),
    job: job ? jobPayload(job) : null,
    vine: vine ? { id: vine.id, name: vine.name, status: vine.status } : null,
    vineyard: vineyard ? { id: vineyard.id, name: vineyard.name } : null,
    url: job ? jobWebUrl(deps.settings.notifications.webUrl, job.id) : null,
  };
}

function jobPayload(job: Job): JsonObject {
  return {
    id: job.id,
    job_type: job.job_type,
    status: job.status,
    error_message: job.error_message,
    created_at: job.created_at,
    finished_at: job.finished_at,
  };
}

export function jobWebUrl(webUrl: string, jobId: string): string {
  return `${webUrl.replace(/\/+$/, '')}/jobs/${jobId}`;
}

/** The notification event a job's end is, if any. */
export function jobEndEvent(status: Job['status']): NotificationEvent | null {
  switch (status) {
    case 'SUCCESS':
      return 'job.succeeded';
    case 'FAILED':
      return 'job.failed';
    case 'CANCELLED':
      return 'job.cancelled';
    default:
      return null;
  }
}

/** Records a job's end (when it is one) in the caller's unit of work. */
export async function enqueueJobEnd(stores: Stores, deps: OutboxDeps, job: Job): Promise<void> {
  const event = jobEndEvent(job.status);
  if (event === null) return;
  // A drift check that ran, or was set aside for a person's job, is routine: what it found is
  // announced as `drift.detected`. Only its failure is news.
  if (job.trigger?.type === 'drift' && event !== 'job.failed') return;
  await enqueueNotification(stores, deps, {
    event,
    owner_id: job.owner_id,
    job_id: job.id,
    vine_id: job.vine_id,
    vineyard_id: job.vineyard_id,
  });
}

/**
 * `job.succeeded`, `job.failed` and `job.cancelled` (issue 14), in the unit of work of the end.
 * A drift check that gave way to other work is routine, and not listed.
 */
export const notificationHooks: readonly JobHook[] = [
  {
    name: 'notifications.jobEnded',
    on: [
      'reported',
      'start_failed',
      'needs_reconnect',
      'source_unavailable',
      'agent_outdated',
      'agent_lost',
      'agent_restarted',
      'cancelled_by_person',
      'agent_destroyed',
      'superseded',
    ],
    run: (job, _change, { stores, deps }) => enqueueJobEnd(stores, deps, job),
  },
];
