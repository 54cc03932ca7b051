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

/** A pool's gauges as it reports them now. */
export type PoolGauges = Pick<PoolStats, 'used' | 'free' | 'pendingAcquires'>;

/**
 * Counts a pool's lending: its owner takes every connection through `acquire`, which times the
 * wait, and reads the gauges from the pool itself (`gauges`). Failed acquisitions are not counted.
 */
export class PoolWatch {
  private acquires = 0;
  private waitMs = 0;

  constructor(private readonly gauges: () => PoolGauges) {}

  async acquire<T>(take: () => Promise<T>): Promise<T> {
    // Asked for a microtask later, as knex's pool was: what reads the gauges in the same
    // synchronous step that started units of work (a metrics scrape, whose own reads of the
    // operational stats start there) sees the pool as it was, not queued with its own reads.
    await undefined;
    const since = performance.now();
    const connection = await take();
    this.acquires += 1;
    this.waitMs += performance.now() - since;
    return connection;
  }

  stats(): PoolStats {
    return { ...this.gauges(), acquires: this.acquires, acquireWaitSeconds: this.waitMs / 1000 };
  }
}
