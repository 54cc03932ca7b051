import type { Clock } from '../ports/Clock.js';
import type { JobCount, OperationalStats } from '../ports/OperationalStats.js';
import type { OutboxKind } from '../domain/outbox.js';

/** What the control plane's gauges show at one moment (docs/observability.md). */
export interface OperationalSnapshot {
  jobs: JobCount[];
  queueDepth: number;
  /** Seconds the oldest `QUEUED` job has waited; 0 when none waits. */
  oldestQueuedSeconds: number;
  /** Workers by the status `deriveWorkerStatus` gives them (destroyed ones are not counted). */
  workers: { online: number; busy: number; offline: number };
  /** Outbox rows still `pending`, every kind together. */
  outboxBacklog: number;
  /** The same by kind (`notification`, `vcs_feedback`). */
  outboxBacklogByKind: Record<OutboxKind, number>;
}

/**
 * The operators' view of the whole control plane, across owners. Worker statuses follow the rule
 * of `deriveWorkerStatus`: silent longer than the heartbeat timeout is `OFFLINE`, else `BUSY` with
 * a `PROCESSING` job, else `ONLINE`.
 */
export class OperationsUseCases {
  constructor(
    private readonly stats: OperationalStats,
    private readonly clock: Clock,
    private readonly heartbeatTimeoutSeconds: number,
  ) {}

  async snapshot(): Promise<OperationalSnapshot> {
    const now = this.clock.now();
    const heardSince = new Date(now.getTime() - this.heartbeatTimeoutSeconds * 1000);
    const jobs = await this.stats.jobCounts();
    const queue = await this.stats.queue();
    const workers = await this.stats.workers(heardSince);
    const outboxBacklogByKind = await this.stats.outboxBacklog();
    const oldestQueuedSeconds =
      queue.oldestCreatedAt === null ? 0 : Math.max(0, (now.getTime() - Date.parse(queue.oldestCreatedAt)) / 1000);
    return {
      jobs,
      queueDepth: queue.depth,
      oldestQueuedSeconds,
      workers: { online: workers.heard - workers.busy, busy: workers.busy, offline: workers.silent },
      outboxBacklog: Object.values(outboxBacklogByKind).reduce((sum, count) => sum + count, 0),
      outboxBacklogByKind,
    };
  }
}
