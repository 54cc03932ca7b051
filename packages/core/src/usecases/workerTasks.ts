import type { Job } from '../domain/records.js';
import type { ScheduledTask, TaskLog } from '../scheduler/ScheduledTask.js';

/**
 * Steady heartbeats are written together (`HeartbeatBuffer`); a failed flush keeps them for the
 * next. Local: each replica writes the heartbeats it queued.
 */
export function heartbeatFlushTask(workers: { flushHeartbeats(): Promise<number> }, every: number): ScheduledTask {
  return {
    id: 'heartbeat-flush',
    every,
    scope: 'local',
    async run() {
      await workers.flushHeartbeats();
    },
  };
}

/** The lost-agent sweep: `PROCESSING` jobs of agents silent past the lost-job timeout fail. */
export function lostJobSweepTask(
  jobs: { sweepLostJobs(): Promise<Job[]> },
  every: number,
  log: TaskLog,
): ScheduledTask {
  return {
    id: 'lost-job-sweep',
    every,
    scope: 'global',
    async run() {
      for (const job of await jobs.sweepLostJobs()) {
        log.warn({ job_id: job.id, worker_id: job.claimed_by_worker_id }, 'agent lost; job failed');
      }
    },
  };
}
