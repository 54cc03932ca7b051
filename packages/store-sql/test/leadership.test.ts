/**
 * Who runs a global background task: on Postgres one replica per task, through session advisory
 * locks on the event bus's connection, kept from turn to turn and given up on resigning or when
 * the connection ends; on SQLite the one process leads every task.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Leadership } from '@trellis/core';
import {
  checkTestPostgres,
  createTestDatabase,
  describeWithPostgres,
  type TestDatabase,
  testPostgresAdminUrl,
} from '@trellis/testkit';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openSqlStore, type SqlStore } from '../src/index.js';
import { LEADERSHIP_LOCK_NAMESPACE } from '../src/PostgresLeadership.js';

const postgres = await checkTestPostgres();

/** Polls `condition` until it holds: the server ends a terminated session on its own time. */
async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (await condition().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('leadership on SQLite', () => {
  it('is the one process’s: it leads every task', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trellis-lead-'));
    const store = await openSqlStore(`sqlite://${join(dir, 'lead.db')}`);
    try {
      const leadership = await store.openLeadership();
      expect(await leadership.tryLeadership('lost-job-sweep')).toBe(true);
      expect(await leadership.tryLeadership('log-retention')).toBe(true);
      await leadership.resign();
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describeWithPostgres('leadership on Postgres', postgres, () => {
  let database: TestDatabase;
  const stores: SqlStore[] = [];
  const quiet = { warn: () => {}, error: () => {} };
  const replica = async (): Promise<{ store: SqlStore; leadership: Leadership }> => {
    const store = await openSqlStore(database.url, { poolSize: 2, logger: quiet });
    stores.push(store);
    return { store, leadership: await store.openLeadership() };
  };

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('gives each task to one replica, which keeps it from turn to turn', async () => {
    const a = await replica();
    const b = await replica();
    expect(await a.store.openLeadership()).toBe(a.leadership);
    expect(await a.leadership.tryLeadership('lost-job-sweep')).toBe(true);
    expect(await b.leadership.tryLeadership('lost-job-sweep')).toBe(false);
    expect(await b.leadership.tryLeadership('log-retention')).toBe(true);
    expect(await a.leadership.tryLeadership('log-retention')).toBe(false);
    for (let turn = 0; turn < 5; turn += 1) {
      expect(await a.leadership.tryLeadership('lost-job-sweep')).toBe(true);
      expect(await b.leadership.tryLeadership('lost-job-sweep')).toBe(false);
    }
  });

  it('hands a task over when its leader resigns, or its store closes', async () => {
    const a = await replica();
    const b = await replica();
    const c = await replica();
    expect(await a.leadership.tryLeadership('drift-checks')).toBe(true);
    await a.leadership.resign();
    expect(await b.leadership.tryLeadership('drift-checks')).toBe(true);
    expect(await a.leadership.tryLeadership('drift-checks')).toBe(false);
    await b.store.close();
    expect(await c.leadership.tryLeadership('drift-checks')).toBe(true);
  });

  it('knows a lead is gone with the connection it was taken on, and takes it again only if free', async () => {
    const a = await replica();
    const b = await replica();
    expect(await a.leadership.tryLeadership('audit-retention')).toBe(true);
    const admin = new pg.Client({ connectionString: testPostgresAdminUrl() });
    await admin.connect();
    try {
      await b.leadership.tryLeadership('b-probe');
      // The leads ride on each replica's event bus connection: no connection more.
      const locks = await admin.query<{ pid: number; held: number }>(
        `SELECT l.pid, count(*)::int AS held FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid
         WHERE l.locktype = 'advisory' AND l.classid = $1 AND s.application_name = 'trellis-events'
         GROUP BY l.pid ORDER BY held DESC`,
        [LEADERSHIP_LOCK_NAMESPACE],
      );
      expect(locks.rows.map((row) => row.held)).toEqual([1, 1]);
      // a took one more lead: its session now holds two locks, b's one. End a's session.
      expect(await a.leadership.tryLeadership('a-probe')).toBe(true);
      const aSession = await admin.query<{ pid: number }>(
        `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 GROUP BY pid HAVING count(*) = 2`,
        [LEADERSHIP_LOCK_NAMESPACE],
      );
      expect(aSession.rows).toHaveLength(1);
      await admin.query('SELECT pg_terminate_backend($1)', [aSession.rows[0]?.pid]);
    } finally {
      await admin.end();
    }
    await until(() => b.leadership.tryLeadership('audit-retention'), 'b to take the lead a lost');
    // a's bus reconnects; its lead went with its old connection, and b holds it now.
    await until(async () => {
      await a.leadership.tryLeadership('a-probe');
      return true;
    }, 'a to be connected again');
    expect(await a.leadership.tryLeadership('audit-retention')).toBe(false);
  });
});
