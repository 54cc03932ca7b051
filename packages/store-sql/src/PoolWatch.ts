import type { Knex } from 'knex';

/** The connection pool as the operators' metrics show it (docs/observability.md). */
export interface PoolStats {
  /** Connections lent to a unit of work now. */
  used: number;
  /** Idle connections. */
  free: number;
  /** Units of work waiting for a connection now. */
  pendingAcquires: number;
  /** Connections lent since the store opened. */
  acquires: number;
  /** Seconds spent waiting for those connections, summed. */
  acquireWaitSeconds: number;
}

/** The part of tarn's `Pool` (knex's pool) read here; knex's types leave it untyped. */
interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  on(event: 'acquireRequest' | 'acquireSuccess' | 'acquireFail', listener: (eventId: number) => void): void;
}

/** Counts knex's pool: its gauges as they are, and the time acquisitions waited. */
export class PoolWatch {
  private readonly waiting = new Map<number, number>();
  private acquires = 0;
  private waitMs = 0;

  constructor(private readonly knex: Knex) {
    const pool = this.pool();
    pool?.on('acquireRequest', (eventId) => this.waiting.set(eventId, performance.now()));
    pool?.on('acquireSuccess', (eventId) => {
      const since = this.waiting.get(eventId);
      this.waiting.delete(eventId);
      if (since === undefined) return;
      this.acquires += 1;
      this.waitMs += performance.now() - since;
    });
    pool?.on('acquireFail', (eventId) => this.waiting.delete(eventId));
  }

  stats(): PoolStats {
    const pool = this.pool();
    return {
      used: pool?.numUsed() ?? 0,
      free: pool?.numFree() ?? 0,
      pendingAcquires: pool?.numPendingAcquires() ?? 0,
      acquires: this.acquires,
      acquireWaitSeconds: this.waitMs / 1000,
    };
  }

  private pool(): TarnPool | undefined {
    return (this.knex.client as { pool?: TarnPool }).pool;
  }
}
