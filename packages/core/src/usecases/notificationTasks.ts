import type { ScheduledTask } from '../scheduler/ScheduledTask.js';

/**
 * Sends the notification outbox's due deliveries, one round at a time. Local: every replica sends,
 * and `FOR UPDATE SKIP LOCKED` keeps each delivery to one of them.
 */
export function notificationDeliveryTask(
  notifications: { deliverDue(): Promise<unknown> },
  every: number,
): ScheduledTask {
  return {
    id: 'notification-deliveries',
    every,
    scope: 'local',
    async run() {
      await notifications.deliverDue();
    },
  };
}
