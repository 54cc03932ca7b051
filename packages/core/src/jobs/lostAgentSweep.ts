import type { Job } from '../domain/records.js';
import { ownerScope, systemScope } from '../ports/UnitOfWork.js';
import { type CoreDeps, isoSecondsBefore } from '../usecases/CoreDeps.js';
import type { HeartbeatBuffer } from '../usecases/HeartbeatBuffer.js';
import type { JobLifecycle } from './JobLifecycle.js';

/**
 * The lost-agent sweep: `PROCESSING` jobs of workers silent longer than the lost-job timeout end
 * for `agent_lost` (FAILED, their vines with them, the state lock their engine held released).
 * Returns the jobs it ended.
 */
export async function sweepLostJobs(
  deps: CoreDeps,
  lifecycle: JobLifecycle,
  heartbeats: HeartbeatBuffer,
): Promise<Job[]> {
  // This replica's queued heartbeats first; other replicas' queued ones are recent by the
  // `HeartbeatBuffer` rule (a heartbeat after a long silence is written at once).
  await heartbeats.flush();
  const timeout = deps.settings.lostJobTimeoutSeconds;
  const cutoff = isoSecondsBefore(deps.clock.now(), timeout);
  const lost = await deps.uow.read(systemScope, (stores) => stores.jobs.listLost(cutoff));
  const ended: Job[] = [];
  for (const job of lost) {
    const failed = await lifecycle.run(ownerScope(job.owner_id), async (stores) => {
      const current = await stores.jobs.get(job.owner_id, job.id);
      if (current?.status !== 'PROCESSING') return null;
      // The agent may have come back since the search: a heartbeat after the cutoff spares its job.
      const agent = current.claimed_by_worker_id
        ? await stores.workers.get(job.owner_id, current.claimed_by_worker_id)
        : null;
      if (agent?.last_heartbeat && Date.parse(agent.last_heartbeat) >= Date.parse(cutoff)) return null;
      return lifecycle.end(stores, current, 'agent_lost', {
        reason: 'agent_lost',
        actor: 'system',
        message: `the agent running this job was lost: no heartbeat from worker ${current.claimed_by_worker_id} for over ${timeout} s`,
      });
    });
    if (failed) ended.push(failed);
  }
  return ended;
}
