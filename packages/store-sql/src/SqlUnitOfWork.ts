import { AsyncLocalStorage } from 'node:async_hooks';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { type Scope, type Stores, UnavailableError, type UnitOfWork } from '@trellis/core';
import type { Dialect, TransactionMode } from './dialects/Dialect.js';
import { createStores } from './stores/createStores.js';

/**
 * `UnitOfWork` on a SQL dialect: one transaction per `run`, every store handed to `work` bound to
 * it, rollback when `work` throws. Store calls go through a guard (`StoreCalls`) that translates
 * vendor errors into domain errors at this edge and runs the calls of one unit of work one after
 * another, since they share one connection.
 */
export class SqlUnitOfWork implements UnitOfWork {
  /** The calls of the unit of work the current async context runs in, if any. */
  private readonly current = new AsyncLocalStorage<StoreCalls>();
  private closed = false;

  constructor(private readonly dialect: Dialect) {}

  run<T>(scope: Scope, work: (stores: Stores) => Promise<T>): Promise<T> {
    return this.inTransaction(scope, work, 'write');
  }

  read<T>(scope: Scope, work: (stores: Stores) => Promise<T>): Promise<T> {
    return this.inTransaction(scope, work, 'read');
  }

  private async inTransaction<T>(
    scope: Scope,
    work: (stores: Stores) => Promise<T>,
    mode: TransactionMode,
  ): Promise<T> {
    this.refuseIfClosed();
    // A unit of work inside another would wait for a second connection (SQLite: for the one the
    // outer holds, forever) and could wait on the outer one's row locks: a deadlock no database
    // detects. It is a bug in the caller, so say so. Work that an ended unit left running is free
    // to start a new one.
    if (this.current.getStore()?.isOpen) {
      throw new Error('a unit of work was started inside another one; pass the stores down instead');
    }
    try {
      return await this.dialect.transaction(
        scope,
        async (session) => {
          const calls = new StoreCalls((error) => this.dialect.translate(error));
          try {
            return await this.current.run(calls, () => work(calls.guard(createStores(session))));
          } finally {
            await calls.end();
          }
        },
        mode,
      );
    } catch (error) {
      throw this.dialect.translate(error);
    }
  }

  async check(): Promise<void> {
    this.refuseIfClosed();
    try {
      await this.dialect.ping();
    } catch (error) {
      throw this.dialect.translate(error);
    }
  }

  /** After `SqlStore.close()`: the store answers as a database that is gone. */
  markClosed(): void {
    this.closed = true;
  }

  private refuseIfClosed(): void {
    if (this.closed) throw new UnavailableError('database_unavailable', 'the store is closed');
  }
}

/**
 * The store calls of one unit of work. They run one at a time, in call order: a transaction is
 * one connection, and a `Promise.all` over stores must neither send it two queries at once (the
 * pg driver only queues them as a deprecated courtesy) nor interleave two calls' savepoints.
 * Calls `work` started but did not await still finish before COMMIT or ROLLBACK, where they would
 * otherwise run outside the transaction; calls made after `run` returned are refused.
 */
class StoreCalls {
  private queue: Promise<unknown> = Promise.resolve();
  private ended = false;

  constructor(private readonly translate: (error: unknown) => unknown) {}

  /** The same stores, each method call queued and its errors translated. */
  guard(stores: Stores): Stores {
    const guarded: Partial<Record<keyof Stores, object>> = {};
    for (const name of Object.keys(stores) as (keyof Stores)[]) {
      guarded[name] = this.guardStore(name, stores[name]);
    }
    return guarded as Stores;
  }

  get isOpen(): boolean {
    return !this.ended;
  }

  /** Refuses new calls and waits for the queued ones. */
  async end(): Promise<void> {
    this.ended = true;
    await this.queue;
  }

  private guardStore<S extends object>(storeName: string, store: S): S {
    return new Proxy(store, {
      get: (target, property, receiver) => {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => this.call(`${storeName}.${String(property)}`, () => value.apply(target, args));
      },
    });
  }

  private call(name: string, invoke: () => Promise<unknown>): Promise<unknown> {
    if (this.ended) {
      return Promise.reject(new Error(`${name} was called after its unit of work ended; a store escaped run()`));
    }
    // The span's parent is the caller's context: the queue runs the call in an earlier one.
    const caller = context.active();
    const result = this.queue
      .then(() => traced(name, caller, invoke))
      .catch((error: unknown) => {
        throw this.translate(error);
      });
    this.queue = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

const tracer = trace.getTracer('@trellis/store-sql');

/** A store call as a span `store <store>.<method>` (a no-op unless tracing is configured). */
function traced(
  name: string,
  parent: ReturnType<typeof context.active>,
  invoke: () => Promise<unknown>,
): Promise<unknown> {
  return tracer.startActiveSpan(
    `store ${name}`,
    { attributes: { 'trellis.store_call': name } },
    parent,
    async (span) => {
      try {
        return await invoke();
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}
