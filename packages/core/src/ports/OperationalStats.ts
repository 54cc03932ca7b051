import type { JobStatus, JobType } from '../domain/enums.js';
import type { OutboxKind } from '../domain/outbox.js';

/** Jobs of one type in one status, every owner together. */
export interface JobCount {
  type: JobType;
  status: JobStatus;
  count: number;
}

/**
 * Counts across every owner that the operators' metrics read (issue 18): each method is one
 * cheap query, run when Prometheus scrapes, never inside a unit of work of a request.
 */
export interface OperationalStats {
  /** Jobs by type and status. */
  jobCounts(): Promise<JobCount[]>;
  /** `QUEUED` jobs: how many, and when the oldest of them was created (null: none). */
  queue(): Promise<{ depth: number; oldestCreatedAt: string | null }>;
  /**
   * Workers not destroyed: those last heard of at or after `heardSince`, of which `busy` have a
   * `PROCESSING` job, and the `silent` rest (never heard of, or before `heardSince`).
   */
  workers(heardSince: Date): Promise<{ heard: number; busy: number; silent: number }>;
  /** Outbox rows still to deliver (`pending`), by kind: notification deliveries and git provider feedback. */
  outboxBacklog(): Promise<Record<OutboxKind, number>>;
}
