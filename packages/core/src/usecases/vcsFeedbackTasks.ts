import type { ScheduledTask, TaskLog } from '../scheduler/ScheduledTask.js';
import type { VcsFeedbackReport } from './vcsFeedback.js';

/**
 * Feedback at the git provider (issue 13): commit statuses and pull request comments, each attempt
 * logged (never a token); a refused or unreachable provider is retried and never fails a job.
 * Local, like the notification deliveries: `SKIP LOCKED` keeps each item to one replica.
 */
export function vcsFeedbackDeliveryTask(
  feedback: { deliverDue(): Promise<VcsFeedbackReport[]> },
  every: number,
  log: TaskLog,
): ScheduledTask {
  return {
    id: 'vcs-feedback-deliveries',
    every,
    scope: 'local',
    async run() {
      for (const report of await feedback.deliverDue()) {
        const fields = { vcs_feedback: report.id, job_id: report.job_id, provider: report.provider, kind: report.kind };
        if (report.status === 'delivered') {
          log.info({ ...fields, attempts: report.attempts }, 'git provider feedback delivered');
        } else if (report.status === 'superseded') {
          log.info(fields, 'git provider feedback superseded by a newer one');
        } else {
          log.warn(
            { ...fields, status: report.status, attempts: report.attempts, error: report.error },
            'git provider feedback not delivered',
          );
        }
      }
    },
  };
}
