/**
 * `global`: one replica at a time runs it, the one leading it (`Leadership`): work on shared rows
 * that one runner does best (sweeps, retention, drift checks). `local`: every replica runs its own
 * (its heartbeat buffer), or shares the work through row locks (deliveries, `SKIP LOCKED`).
 */
export type TaskScope = 'global' | 'local';

/** A piece of background work, as data: what runs, how often, and where. */
export interface ScheduledTask {
  /** Unique and stable: names the task in logs and metrics, and its lead across replicas. */
  readonly id: string;
  /**
   * Seconds from one turn to the next. A run still going at its next turn is not doubled: that
   * turn is skipped (`overlapping`).
   */
  readonly every: number;
  readonly scope: TaskScope;
  /**
   * One run. `signal` aborts at shutdown: stop early where that is safe; the scheduler waits for
   * the run either way. A rejection is logged and counted, and the next turn runs as usual.
   */
  run(signal: AbortSignal): Promise<void>;
}

/** What one turn of a task came to. */
export type TaskTurn = 'succeeded' | 'failed' | 'overlapping' | 'not_leader' | 'closed';

/** A turn that did not run the task. */
export type TaskSkip = 'overlapping' | 'not_leader';

/** Told of every run and skipped turn: the composition root logs the failures and counts them all. */
export interface TaskObserver {
  ran(taskId: string, outcome: 'succeeded' | 'failed', seconds: number, error?: unknown): void;
  skipped(taskId: string, reason: TaskSkip): void;
}

/** Turns of one task since the scheduler started. */
export interface TaskStats {
  /** Runs started (leadership taken, for a global task). */
  runs: number;
  /** Runs that threw, and turns whose leadership could not be checked. */
  failures: number;
  /** Turns skipped: overlapping a run still going, or led by another replica. */
  skipped: number;
}

/** Where a task says what it did: the server's structured log (pino's `(fields, message)`). */
export interface TaskLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}
