import type { Leadership } from '../ports/Leadership.js';
import type { Ticker } from '../ports/Ticker.js';
import { IntervalTicker } from './IntervalTicker.js';
import type { ScheduledTask, TaskObserver, TaskSkip, TaskStats, TaskTurn } from './ScheduledTask.js';

export interface TaskSchedulerOptions {
  /** Who runs the global tasks (`SoleLeadership` where one process is all there is). */
  leadership: Leadership;
  /** What wakes the tasks; default: real intervals. */
  ticker?: Ticker;
  /** Told of every run and skipped turn (logs, metrics). */
  observer?: TaskObserver;
}

interface Entry {
  readonly task: ScheduledTask;
  /** The turn in flight, if any: a task never overlaps itself. */
  running: Promise<TaskTurn> | null;
  stop: (() => void) | null;
  readonly stats: TaskStats;
}

/**
 * Runs every background task of a process (Backstage's `SchedulerService`, OTF's subsystems):
 * each on its own interval, never overlapping itself, a global one only where this process leads
 * it; a failed run is reported and the schedule goes on. `close()` stops the turns, aborts the
 * runs in flight and waits for them.
 */
export class TaskScheduler {
  private readonly entries = new Map<string, Entry>();
  private readonly shutdown = new AbortController();
  private readonly ticker: Ticker;
  private started = false;
  private closing: Promise<void> | null = null;

  constructor(
    tasks: readonly ScheduledTask[],
    private readonly options: TaskSchedulerOptions,
  ) {
    this.ticker = options.ticker ?? new IntervalTicker();
    for (const task of tasks) {
      if (this.entries.has(task.id)) throw new Error(`two background tasks are named ${task.id}`);
      if (!(Number.isFinite(task.every) && task.every > 0)) {
        throw new Error(`background task ${task.id} must run every so many seconds, more than 0 (got ${task.every})`);
      }
      this.entries.set(task.id, { task, running: null, stop: null, stats: { runs: 0, failures: 0, skipped: 0 } });
    }
  }

  /** The tasks by id, in the order given. */
  get taskIds(): string[] {
    return [...this.entries.keys()];
  }

  /** Starts every task's interval; the first turn comes one interval from now. */
  start(): void {
    if (this.started || this.closing) return;
    this.started = true;
    for (const entry of this.entries.values()) {
      entry.stop = this.ticker.every(entry.task.every, () => {
        void this.turn(entry);
      });
    }
  }

  /** One turn of a task now, as its interval would take it; resolves when the turn is over. */
  runNow(taskId: string): Promise<TaskTurn> {
    const entry = this.entries.get(taskId);
    if (!entry) throw new Error(`no background task is named ${taskId}`);
    return this.turn(entry);
  }

  /** Resolves once the turns in flight now are over. */
  async idle(): Promise<void> {
    await Promise.all([...this.entries.values()].map((entry) => entry.running));
  }

  stats(): Record<string, TaskStats> {
    return Object.fromEntries([...this.entries].map(([id, entry]) => [id, { ...entry.stats }]));
  }

  /** Stops every interval, aborts the runs in flight, waits for them, then resigns every lead. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const entry of this.entries.values()) entry.stop?.();
      this.shutdown.abort();
      await this.idle();
      // A lead not given up here ends with the process's database connection anyway.
      await this.options.leadership.resign().catch(() => {});
    })();
    return this.closing;
  }

  private turn(entry: Entry): Promise<TaskTurn> {
    if (this.closing) return Promise.resolve('closed');
    if (entry.running) return Promise.resolve(this.skip(entry, 'overlapping'));
    const turn = this.take(entry).finally(() => {
      entry.running = null;
    });
    entry.running = turn;
    return turn;
  }

  /** Never rejects: a failure is counted and reported, and the next turn runs as usual. */
  private async take(entry: Entry): Promise<TaskTurn> {
    const { task } = entry;
    const started = performance.now();
    try {
      if (task.scope === 'global' && !(await this.options.leadership.tryLeadership(task.id))) {
        return this.skip(entry, 'not_leader');
      }
      if (this.shutdown.signal.aborted) return 'closed';
      entry.stats.runs += 1;
      await task.run(this.shutdown.signal);
      this.report((observer) => observer.ran(task.id, 'succeeded', (performance.now() - started) / 1000));
      return 'succeeded';
    } catch (error) {
      entry.stats.failures += 1;
      this.report((observer) => observer.ran(task.id, 'failed', (performance.now() - started) / 1000, error));
      return 'failed';
    }
  }

  private skip(entry: Entry, reason: TaskSkip): TaskSkip {
    entry.stats.skipped += 1;
    this.report((observer) => observer.skipped(entry.task.id, reason));
    return reason;
  }

  /** An observer that throws must not stop the schedule. */
  private report(tell: (observer: TaskObserver) => void): void {
    if (!this.options.observer) return;
    try {
      tell(this.options.observer);
    } catch {
      // Reporting is best effort; the task's own outcome stands.
    }
  }
}
