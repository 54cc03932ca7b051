import { announce } from '../usecases/CoreDeps.js';
import { END_REASONS } from './endReasons.js';
import type { JobHook } from './hooks.js';

/**
 * Live views (the web's job pages, `trellis jobs follow`, long-polled claims) learn of every
 * queued and ended job from the event bus, once the change is committed.
 */
export const liveAnnouncementHooks: readonly JobHook[] = [
  {
    name: 'live.jobQueued',
    on: ['queued', 'requeued'],
    async run(job, _change, { deps, afterCommit }) {
      afterCommit(() => announce(deps.events, { type: 'job_queued', owner_id: job.owner_id, job_id: job.id }));
    },
  },
  {
    name: 'live.jobEnded',
    on: END_REASONS,
    async run(job, _change, { deps, afterCommit }) {
      afterCommit(() =>
        announce(deps.events, {
          type: 'job_status_changed',
          owner_id: job.owner_id,
          job_id: job.id,
          status: job.status,
        }),
      );
    },
  },
];
