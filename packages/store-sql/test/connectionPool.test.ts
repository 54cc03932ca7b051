/**
 * The connections a store lends its units of work: on Postgres a `pg.Pool` the dialect owns (knex
 * borrows it for migrations), on SQLite the one connection behind the process's mutex. What the
 * operators' pool metrics read, and what a caller sees when no connection becomes free in time.
 */
import { systemScope, UnavailableError } from '@trellis/core';
import { checkTestPostgres, describeWithPostgres, testPostgresAdminUrl } from '@trellis/testkit';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqlStore, type SqlStore } from '../src/index.js';
import { useMigratedDatabases } from './support/sqlStores.js';

const postgres = await checkTestPostgres();

/** A unit of work that holds its connection until `release()`; `started` once it has it. */
function holdConnection(store: SqlStore): { started: Promise<void>; release: () => void; done: Promise<void> } {
  let release!: () => void;
  let started!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const startedPromise = new Promise<void>((resolve) => {
    started = resolve;
  });
  const done = store.uow.run(systemScope, async () => {
    started();
    await held;
  });
  return { started: startedPromise, release, done };
}

describeWithPostgres('the Postgres connection pool', postgres, () => {
  const databases = useMigratedDatabases('postgres');
  let store: SqlStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  it('counts lent, free and waiting connections, and answers database_unavailable when none becomes free', async () => {
    const opened = await databases.openStore();
    await opened.close();
    store = await openSqlStore(opened.url, { poolSize: 2, connectTimeoutMs: 300 });
    const first = holdConnection(store);
    const second = holdConnection(store);
    await Promise.all([first.started, second.started]);
    expect(store.poolStats()).toMatchObject({ used: 2, free: 0, pendingAcquires: 0, acquires: 2 });

    const third = store.uow.run(systemScope, async () => 'ran');
    const failed = third.catch((error: unknown) => error);
    // The third asks the pool within the microtasks that follow, and waits there.
    await new Promise(setImmediate);
    expect(store.poolStats().pendingAcquires).toBe(1);
    const error = await failed;
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error).toMatchObject({ code: 'database_unavailable' });

    first.release();
    second.release();
    await Promise.all([first.done, second.done]);
    expect(store.poolStats()).toMatchObject({ used: 0, free: 2, pendingAcquires: 0, acquires: 2 });
    expect(await store.uow.run(systemScope, async () => 'ran')).toBe('ran');
    expect(store.poolStats().acquires).toBe(3);
  });

  it('survives the server ending a connection lent to a unit of work: that unit fails, the next gets a new one', async () => {
    const opened = await databases.openStore();
    store = opened.store;
    const held = holdConnection(store);
    await held.started;
    const admin = new pg.Client({ connectionString: testPostgresAdminUrl() });
    await admin.connect();
    try {
      const ended = await admin.query(
        // Only the held one: an idle pooled connection ended too could reach the next unit of work
        // before pg has read the server's goodbye on it (a failure that unit would then see).
        `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
         WHERE datname = $1 AND state = 'idle in transaction'`,
        [new URL(opened.url).pathname.slice(1)],
      );
      expect(ended.rows).toEqual([{ ended: true }]);
    } finally {
      await admin.end();
    }
    held.release();
    await expect(held.done).rejects.toMatchObject({ code: 'database_unavailable' });
    expect(await store.uow.run(systemScope, async () => 'ran')).toBe('ran');
  });
});

describe('the SQLite connection', () => {
  const databases = useMigratedDatabases('sqlite');
  let store: SqlStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  it('is lent to one unit of work at a time; the others wait in order, counted as waiting', async () => {
    const opened = await databases.openStore();
    store = opened.store;
    const before = store.poolStats().acquires;
    const first = holdConnection(store);
    await first.started;
    expect(store.poolStats()).toMatchObject({ used: 1, free: 0, pendingAcquires: 0 });

    const order: string[] = [];
    const second = store.uow.run(systemScope, async () => order.push('second'));
    const third = store.uow.read(systemScope, async () => order.push('third'));
    await new Promise(setImmediate);
    expect(store.poolStats().pendingAcquires).toBe(2);

    first.release();
    await Promise.all([first.done, second, third]);
    expect(order).toEqual(['second', 'third']);
    expect(store.poolStats()).toMatchObject({ used: 0, free: 1, pendingAcquires: 0, acquires: before + 3 });
  });
});
