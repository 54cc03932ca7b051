import { AsyncLocalStorage } from 'node:async_hooks';
import { isDeepStrictEqual } from 'node:util';
import { type Scope, type Stores, type UnitOfWork, UnavailableError } from '@trellis/core';
import { emptyMemoryState, type MemoryState } from './MemoryState.js';
import { type MemorySequences, MemoryTransaction } from './MemoryTransaction.js';
import { memoryStores } from './stores/index.js';

/** Lets a test replace or spy on the stores a unit of work is handed (to inject failures). */
export type StoresWrapper = (stores: Stores, scope: Scope) => Stores;

export interface MemoryUnitOfWorkOptions {
  wrapStores?: StoresWrapper;
}

/**
 * The whole database in memory. Units of work run one at a time (an async mutex) against a copy
 * of the committed state; the copy becomes the committed state when the work returns and is
 * dropped when it throws, so a failed unit changes nothing.
 */
export class MemoryUnitOfWork implements UnitOfWork {
  /** Set to make the stores a unit of work receives pass through this function. */
  wrapStores: StoresWrapper | undefined;
  /** When set, `run` and `check` fail with this `UnavailableError`, as a database that is down. */
  private outage: UnavailableError | null = null;
  private committed: MemoryState = emptyMemoryState();
  private readonly sequences: MemorySequences = { nextLogId: 1, nextStateVersionId: 1 };
  private queue: Promise<void> = Promise.resolve();
  private readonly current = new AsyncLocalStorage<MemoryTransaction>();
  private counts = { committed: 0, rolledBack: 0 };
  private reads = 0;

  constructor(options: MemoryUnitOfWorkOptions = {}) {
    this.wrapStores = options.wrapStores;
  }

  async run<T>(scope: Scope, work: (stores: Stores) => Promise<T>): Promise<T> {
    // Work left running by a unit that has ended (a fire-and-forget promise) is not nested.
    if (this.current.getStore()?.isOpen) {
      // A real database would hand out a second connection and may deadlock on the first's locks.
      throw new Error('a unit of work was started inside another one');
    }
    return this.exclusive(async () => {
      if (this.outage) throw this.outage;
      const draft = structuredClone(this.committed);
      const tx = new MemoryTransaction(draft, scope, this.sequences);
      const stores = memoryStores(tx);
      try {
        const result = await this.current.run(tx, () =>
          work(this.wrapStores ? this.wrapStores(stores, scope) : stores),
        );
        this.committed = draft;
        this.counts.committed += 1;
        return result;
      } catch (error) {
        this.counts.rolledBack += 1;
        throw error;
      } finally {
        tx.close();
      }
    });
  }

  /**
   * Like `run`, but read-only: nothing is committed, and work that changed anything fails, as a
   * write in a read-only transaction does on a database.
   */
  async read<T>(scope: Scope, work: (stores: Stores) => Promise<T>): Promise<T> {
    if (this.current.getStore()?.isOpen) {
      throw new Error('a unit of work was started inside another one');
    }
    return this.exclusive(async () => {
      if (this.outage) throw this.outage;
      const draft = structuredClone(this.committed);
      const tx = new MemoryTransaction(draft, scope, this.sequences);
      const stores = memoryStores(tx);
      try {
        const result = await this.current.run(tx, () =>
          work(this.wrapStores ? this.wrapStores(stores, scope) : stores),
        );
        if (!isDeepStrictEqual(draft, this.committed)) {
          throw new Error('a read-only unit of work wrote; use run() for work that writes');
        }
        return result;
      } finally {
        this.reads += 1;
        tx.close();
      }
    });
  }

  async check(): Promise<void> {
    if (this.outage) throw this.outage;
  }

  /** From now on `run` and `check` throw `UnavailableError` (pass `false` to end the outage). */
  setUnavailable(unavailable = true, message = 'the database cannot be reached'): void {
    this.outage = unavailable ? new UnavailableError('database_unavailable', message) : null;
  }

  /** How many read-only units of work ran so far. */
  get readCount(): number {
    return this.reads;
  }

  /** How many units of work committed and rolled back so far. */
  get stats(): { committed: number; rolledBack: number } {
    return { ...this.counts };
  }

  /** A deep copy of the committed state, for assertions. */
  snapshot(): MemoryState {
    return structuredClone(this.committed);
  }

  /**
   * Changes committed state directly, as a test would with SQL behind the application's back
   * (for example to edit a vine, which no use case does). Waits for running units of work.
   */
  async modify<T>(change: (state: MemoryState) => T): Promise<T> {
    return this.exclusive(async () => {
      const draft = structuredClone(this.committed);
      const result = change(draft);
      this.committed = draft;
      return result;
    });
  }

  /** Runs `task` once every earlier task has settled. */
  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    const result = this.queue.then(task);
    this.queue = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}
