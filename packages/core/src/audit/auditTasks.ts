import type { ScheduledTask, TaskLog } from '../scheduler/ScheduledTask.js';

/** Deletes audit entries older than the audit retention (system work). */
export function auditRetentionTask(audit: { prune(): Promise<number> }, every: number, log: TaskLog): ScheduledTask {
  return {
    id: 'audit-retention',
    every,
    scope: 'global',
    async run() {
      const deleted = await audit.prune();
      if (deleted > 0) log.info({ deleted_audit_entries: deleted }, 'deleted audit entries past their retention');
    },
  };
}
