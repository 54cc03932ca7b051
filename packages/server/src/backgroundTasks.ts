import type { ScheduledTask, TaskObserver, UseCases } from '@trellis/core';
import type { Logger } from '@trellis/http';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { ServerConfig } from './config.js';
import type { TrellisModule } from './modules.js';

/**
 * Every background task of the control plane: each module's (docs/architecture.md, Background
 * work), defined beside its feature in core, its interval a setting.
 */
export function backgroundTasks(
  modules: readonly TrellisModule[],
  useCases: UseCases,
  config: ServerConfig,
  logger: Logger,
): ScheduledTask[] {
  return modules.flatMap((module) => module.tasks?.(useCases, config, logger) ?? []);
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
