import type { Job } from '../domain/records.js';
import type { ScheduledTask, TaskLog } from '../scheduler/ScheduledTask.js';

/**
 * Queues the drift checks that are due (docs/drift.md). Global: one replica queues them; were two
 * to, `FOR UPDATE SKIP LOCKED` would still keep each check to one.
 */
export function driftCheckTask(drift: { queueDue(): Promise<Job[]> }, every: number, log: TaskLog): ScheduledTask {
  return {
    id: 'drift-checks',
    every,
    scope: 'global',
    async run() {
      for (const job of await drift.queueDue()) {
        log.info({ job_id: job.id, vine_id: job.vine_id }, 'drift check queued');
      }
    },
  };
}
