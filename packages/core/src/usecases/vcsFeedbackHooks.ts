import type { JobHook } from '../jobs/hooks.js';
import { enqueueVcsFeedback } from './vcsFeedback.js';

/**
 * A git-driven job's feedback at its provider (issue 13), in the unit of work of the change: its
 * commit's `pending` status when queued; when it ends, the final status and (a pull request's
 * PLAN) the comment. Nothing for other jobs. A drift check that gave way has no commit.
 */
export const vcsFeedbackHooks: readonly JobHook[] = [
  {
    name: 'vcs.jobQueued',
    on: ['queued'],
    async run(job, _change, { stores, deps }) {
      await enqueueVcsFeedback(stores, deps, job, 'queued');
    },
  },
  {
    name: 'vcs.jobEnded',
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
    async run(job, change, { stores, deps }) {
      await enqueueVcsFeedback(stores, deps, job, change.moment === 'agent_lost' ? 'lost' : 'ended');
    },
  },
];
