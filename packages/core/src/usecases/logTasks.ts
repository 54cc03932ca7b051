import type { ScheduledTask, TaskLog } from '../scheduler/ScheduledTask.js';

/** Deletes the logs of jobs finished longer ago than the log retention, in bounded batches. */
export function logRetentionTask(
  logs: { deleteExpired(): Promise<number> },
  every: number,
  log: TaskLog,
): ScheduledTask {
  return {
    id: 'log-retention',
    every,
    scope: 'global',
    async run() {
      const deleted = await logs.deleteExpired();
      if (deleted > 0) log.info({ deleted_chunks: deleted }, 'deleted logs past their retention');
    },
  };
}
