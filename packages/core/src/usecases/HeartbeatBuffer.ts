import type { HeartbeatWrite } from '../ports/WorkerStore.js';
import { systemScope } from '../ports/UnitOfWork.js';
import type { CoreDeps } from './CoreDeps.js';

/**
 * Agents' heartbeats, coalesced: a steady heartbeat is queued here and written with every other
 * agent's in one statement at the next flush (every `heartbeatFlushSeconds`, and on shutdown),
 * instead of one write transaction each.
 *
 * A heartbeat is written at once, with the request, when this replica has accepted none from the
 * agent for `min(heartbeatTimeoutSeconds, lostJobTimeoutSeconds) − 2 × heartbeatFlushSeconds`
 * (always the first after a start, or after a silence that made the agent `OFFLINE`). So while an
 * agent keeps heartbeating, its stored `last_heartbeat` lags the last heartbeat by at most one
 * flush interval plus the flush's own time, and is never old enough to make it `OFFLINE` or lost;
 * a heartbeat that changes what the rules decide (`OFFLINE` → `ONLINE`, or one that spares a job
 * from the lost-agent sweep) is in the database before the agent has its answer.
 */
export class HeartbeatBuffer {
  private pending = new Map<string, HeartbeatWrite>();
  /** When this replica last accepted each agent's heartbeat (ms); entries past `writeAfterMs` go. */
  private readonly accepted = new Map<string, number>();
  private flushing: Promise<number> = Promise.resolve(0);

  constructor(private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'settings'>) {}

  /** Whether a heartbeat at `at` must be written with its request rather than queued. */
  mustWriteNow(workerId: string, at: Date): boolean {
    const last = this.accepted.get(workerId);
    return last === undefined || at.getTime() - last >= this.writeAfterMs();
  }

  /** A heartbeat written with its request: anything queued for the agent is older. */
  written(beat: HeartbeatWrite): void {
    this.pending.delete(beat.worker_id);
    this.accepted.set(beat.worker_id, Date.parse(beat.at));
  }

  /** A heartbeat for the next flush; it replaces the agent's queued one. */
  queue(beat: HeartbeatWrite): void {
    this.pending.set(beat.worker_id, beat);
    this.accepted.set(beat.worker_id, Date.parse(beat.at));
  }

  get queued(): number {
    return this.pending.size;
  }

  /**
   * Writes the queued heartbeats in one unit of work; returns how many. Flushes run one after
   * another; a failed one keeps its heartbeats queued (unless a newer one came) and rethrows.
   */
  flush(): Promise<number> {
    const run = this.flushing.catch(() => 0).then(() => this.writePending());
    this.flushing = run;
    return run;
  }

  private async writePending(): Promise<number> {
    this.forgetStale();
    if (this.pending.size === 0) return 0;
    const beats = [...this.pending.values()];
    this.pending = new Map();
    try {
      await this.deps.uow.run(systemScope, (stores) => stores.workers.recordHeartbeats(beats));
    } catch (error) {
      for (const beat of beats) if (!this.pending.has(beat.worker_id)) this.pending.set(beat.worker_id, beat);
      throw error;
    }
    return beats.length;
  }

  /** An agent not heard from within `writeAfterMs` is written at once anyway: its entry can go. */
  private forgetStale(): void {
    const horizon = this.deps.clock.now().getTime() - this.writeAfterMs();
    for (const [workerId, at] of this.accepted) if (at <= horizon) this.accepted.delete(workerId);
  }

  private writeAfterMs(): number {
    const { heartbeatTimeoutSeconds, lostJobTimeoutSeconds, heartbeatFlushSeconds } = this.deps.settings;
    if (heartbeatFlushSeconds <= 0) return 0;
    return (Math.min(heartbeatTimeoutSeconds, lostJobTimeoutSeconds) - 2 * heartbeatFlushSeconds) * 1000;
  }
}
