import type { DriftResult, Job } from '../domain/records.js';
import { planChanges } from '../domain/jobResults.js';
import type { JobHook } from '../jobs/hooks.js';
import { enqueueNotification } from '../usecases/notificationOutbox.js';

/** The result a finished drift check leaves on its vine. */
export function driftResultOf(job: Job, at: string): DriftResult {
  const base = { checked_at: job.finished_at ?? at, job_id: job.id };
  if (job.status !== 'SUCCESS') {
    return { ...base, status: 'unknown', changes: null, error: job.error_message ?? 'the drift check failed' };
  }
  const summary = job.execution_metadata.plan_summary;
  if (summary === undefined) {
    return { ...base, status: 'unknown', changes: null, error: 'the agent reported no plan summary' };
  }
  const changes = { add: summary.add, change: summary.change, destroy: summary.destroy };
  return { ...base, status: planChanges(summary) > 0 ? 'drifted' : 'in_sync', changes };
}

/**
 * Drift detection (issue 14) on the lifecycle: a drift check that ran (or could not) records its
 * result on the vine, with `drift.detected` when the vine starts to drift.
 */
export const driftHooks: readonly JobHook[] = [
  {
    name: 'drift.result',
    on: [
      'reported',
      'start_failed',
      'needs_reconnect',
      'source_unavailable',
      'agent_outdated',
      'agent_lost',
      'agent_restarted',
      'agent_destroyed',
    ],
    async run(job, change, { stores, deps }) {
      if (job.trigger.type !== 'drift' || job.vine_id === null) return;
      if (job.status !== 'SUCCESS' && job.status !== 'FAILED') return;
      const drift = driftResultOf(job, change.at);
      const before = await stores.vines.get(job.owner_id, job.vine_id);
      await stores.vines.recordDrift(job.owner_id, job.vine_id, drift);
      // Announced when the vine starts to drift, not again at every check that finds it still drifted.
      if (drift.status === 'drifted' && before?.drift?.status !== 'drifted') {
        await enqueueNotification(stores, deps, {
          event: 'drift.detected',
          owner_id: job.owner_id,
          job_id: job.id,
          vine_id: job.vine_id,
          vineyard_id: job.vineyard_id,
        });
      }
    },
  },
];

/** Run triggers (issue 14): a successful DEPLOY queues a PLAN of each vine that runs after it. */
export const runTriggerHooks: readonly JobHook[] = [
  {
    name: 'triggers.downstream',
    on: ['reported'],
    async run(job, _change, { stores, lifecycle }) {
      if (job.status !== 'SUCCESS' || job.job_type !== 'DEPLOY' || job.vine_id === null) return;
      for (const downstream of await stores.vines.listDownstream(job.owner_id, job.vine_id)) {
        await lifecycle.queue(stores, {
          owner_id: downstream.owner_id,
          job_type: 'PLAN',
          vine: downstream,
          trigger: { type: 'upstream', vine_id: job.vine_id, job_id: job.id },
          actor: 'system',
          // Whoever deployed upstream caused this plan: not its approver where one must differ (issue 23).
          caused_by: job.created_by ?? job.caused_by,
          audit: { trigger: 'upstream', upstream_job_id: job.id },
        });
      }
    },
  },
];
