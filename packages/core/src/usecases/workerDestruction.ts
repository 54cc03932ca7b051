import type { WorkerCredentialCache } from '../auth/WorkerCredentialCache.js';
import type { JobHook, JobHookContext } from '../jobs/hooks.js';
import type { AuditBy } from './audit.js';
import { announce } from './CoreDeps.js';

/**
 * Destroys a worker: its token stops working (here at once, on other replicas by the event, after
 * commit), and its jobs end at once, because a destroyed agent never reports again: the job it
 * was running fails (its vine's state lock released) and the queued jobs assigned to it, which
 * could never run and would hold their vines' queues, are cancelled. Every path that destroys a
 * worker goes through here.
 */
export async function destroyWorker(
  context: JobHookContext,
  worker: { owner_id: string; id: string },
  at: string,
  actor: AuditBy,
  credentials?: WorkerCredentialCache,
): Promise<void> {
  const { stores, lifecycle, deps } = context;
  await stores.workers.markDestroyed(worker.owner_id, worker.id, at);
  const [running, queued] = await Promise.all([
    stores.jobs.list(worker.owner_id, { status: 'PROCESSING' }),
    stores.jobs.list(worker.owner_id, { status: 'QUEUED' }),
  ]);
  for (const job of running.filter((j) => j.claimed_by_worker_id === worker.id)) {
    await lifecycle.end(stores, job, 'agent_lost', { reason: 'agent_destroyed', actor });
  }
  for (const job of queued.filter((j) => j.assigned_worker_id === worker.id)) {
    await lifecycle.end(stores, job, 'cancel', { reason: 'agent_destroyed', actor });
  }
  context.afterCommit(async () => {
    credentials?.forget(worker.id);
    await announce(deps.events, {
      type: 'worker_credentials_changed',
      owner_id: worker.owner_id,
      worker_id: worker.id,
    });
  });
}

/** A DESTROY_WORKER that succeeded destroys its target worker. */
export function workerHooks(credentials?: WorkerCredentialCache): readonly JobHook[] {
  return [
    {
      name: 'workers.destroyTarget',
      on: ['reported'],
      async run(job, change, context) {
        if (job.job_type !== 'DESTROY_WORKER' || job.status !== 'SUCCESS' || job.target_worker_id === null) return;
        await destroyWorker(
          context,
          { owner_id: job.owner_id, id: job.target_worker_id },
          change.at,
          'system',
          credentials,
        );
      },
    },
  ];
}
