import type { ScheduledTask, TaskLog } from '../scheduler/ScheduledTask.js';
import { reportVcsFeedback } from '../usecases/vcsFeedback.js';
import type { OutboxDelivered } from './delivery.js';

/**
 * Sends the outbox's due rows, one round at a time, each to its kind's deliverer (issue 24).
 * Local: every replica sends, and `FOR UPDATE SKIP LOCKED` keeps each row to one of them. What
 * happened to git provider feedback is logged (never a token); a notification's attempts are on
 * its delivery (`GET /api/notifications/{id}/deliveries`).
 */
export function outboxDeliveryTask(
  outbox: { deliverDue(): Promise<OutboxDelivered[]> },
  every: number,
  log: TaskLog,
): ScheduledTask {
  return {
    id: 'outbox-deliveries',
    every,
    scope: 'local',
    async run() {
      for (const delivered of await outbox.deliverDue()) {
        if (delivered.kind === 'vcs_feedback' && delivered.recorded !== null) {
          logVcsFeedback(log, reportVcsFeedback(delivered.recorded));
        }
      }
    },
  };
}

function logVcsFeedback(log: TaskLog, report: ReturnType<typeof reportVcsFeedback>): void {
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
