import type { CoreModule } from '../modules/CoreModule.js';
import { useCase } from '../modules/CoreModule.js';
import { notificationServices } from '../notifications/module.js';
import { coreServices, serviceRef } from '../tokens.js';
import { vcsServices } from '../vcs/module.js';
import { OutboxUseCases } from './OutboxUseCases.js';

/** The outbox (issue 24): one table and one delivery task for notifications and git provider feedback. */
export const outboxServices = {
  outbox: serviceRef<OutboxUseCases>('trellis.outbox.outbox'),
} as const;

/** After notifications and VCS in the list: its deliverers are theirs. */
export const outboxModule: CoreModule = {
  name: 'outbox',
  useCases: [
    useCase(
      'outbox',
      outboxServices.outbox,
      (get) =>
        new OutboxUseCases(get(coreServices.deps), {
          notification: get(notificationServices.notifications),
          vcs_feedback: get(vcsServices.vcsFeedback),
        }),
    ),
  ],
};
