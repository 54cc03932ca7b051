import {
  auditRetentionTask,
  deletedVineRetentionTask,
  driftCheckTask,
  heartbeatFlushTask,
  logRetentionTask,
  lostJobSweepTask,
  outboxDeliveryTask,
  type ScheduledTask,
  type TaskObserver,
  type UseCases,
} from '@trellis/core';
import type { Logger } from '@trellis/http';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { ServerConfig } from './config.js';

/**
 * Every background task of the control plane, one entry each (docs/architecture.md, Background
 * work): the task is defined beside its feature in core, its interval is a setting.
 */
export function backgroundTasks(useCases: UseCases, config: ServerConfig, logger: Logger): ScheduledTask[] {
  return [
    // 0 turns batching off: each heartbeat is written with its request.
    ...(config.heartbeatFlushSeconds > 0 ? [heartbeatFlushTask(useCases.workers, config.heartbeatFlushSeconds)] : []),
    lostJobSweepTask(useCases.jobs, config.sweepIntervalSeconds, logger),
    driftCheckTask(useCases.drift, config.driftSchedulerIntervalSeconds, logger),
    logRetentionTask(useCases.logs, config.retentionIntervalSeconds, logger),
    auditRetentionTask(useCases.audit, config.retentionIntervalSeconds, logger),
    deletedVineRetentionTask(useCases.vineEdits, config.retentionIntervalSeconds, logger),
    outboxDeliveryTask(useCases.outbox, config.outbox.intervalSeconds, logger),
  ];
}

/** Failed runs in the log; every run and skipped turn in the metrics, when they are on. */
export function taskObserver(logger: Logger, registry: Registry | null): TaskObserver {
  const metrics = registry && {
    runs: new Counter({
      name: 'trellis_background_task_runs_total',
      help: 'Runs of background tasks by task and outcome (succeeded, failed)',
      labelNames: ['task', 'outcome'],
      registers: [registry],
    }),
    skipped: new Counter({
      name: 'trellis_background_task_skipped_total',
      help: 'Turns of background tasks not run, by task and reason (overlapping: the last run was still going; not_leader: another replica leads the task)',
      labelNames: ['task', 'reason'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'trellis_background_task_duration_seconds',
      help: 'How long runs of background tasks took, by task',
      labelNames: ['task'],
      buckets: [0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 30, 120],
      registers: [registry],
    }),
  };
  return {
    ran(task, outcome, seconds, error) {
      if (outcome === 'failed') logger.error({ err: error, task }, 'background task failed');
      metrics?.runs.inc({ task, outcome });
      metrics?.duration.observe({ task }, seconds);
    },
    skipped(task, reason) {
      metrics?.skipped.inc({ task, reason });
    },
  };
}
