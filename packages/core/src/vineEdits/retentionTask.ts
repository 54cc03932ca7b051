import type { ScheduledTask, TaskLog } from '../scheduler/ScheduledTask.js';

/** Purges the state versions of vines deleted longer ago than their retention (system work). */
export function deletedVineRetentionTask(
  edits: { purgeDeleted(): Promise<number> },
  every: number,
  log: TaskLog,
): ScheduledTask {
  return {
    id: 'deleted-vine-retention',
    every,
    scope: 'global',
    async run() {
      const purged = await edits.purgeDeleted();
      if (purged > 0) log.info({ purged_state_versions: purged }, 'purged the state of deleted configurations');
    },
  };
}
