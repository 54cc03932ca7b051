import type { CoreModule } from '../modules/CoreModule.js';
import { useCase } from '../modules/CoreModule.js';
import { coreServices, serviceRef } from '../tokens.js';
import { notificationHooks } from '../usecases/notificationOutbox.js';
import { NotificationUseCases } from '../usecases/NotificationUseCases.js';

/**
 * Notifications (docs/notifications.md): channels, rules and the delivery outbox. Their code is
 * still in `usecases/` (`NotificationUseCases.ts`, `notificationOutbox.ts`, `notificationTasks.ts`).
 */
export const notificationServices = {
  notifications: serviceRef<NotificationUseCases>('trellis.notifications.notifications'),
} as const;

export const notificationsModule: CoreModule = {
  name: 'notifications',
  useCases: [
    useCase(
      'notifications',
      notificationServices.notifications,
      (get) => new NotificationUseCases(get(coreServices.deps)),
    ),
  ],
  hooks: () => ({ report: notificationHooks }),
};
