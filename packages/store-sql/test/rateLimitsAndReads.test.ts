import { systemScope, type User } from '@trellis/core';
import {
  checkTestPostgres,
  createTestDatabase,
  describeRateLimitStoreConformance,
  describeWithPostgres,
} from '@trellis/testkit';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openSqlStore } from '../src/index.js';
import { migrateDatabase, useMigratedDatabases } from './support/sqlStores.js';

const postgres = await checkTestPostgres();
const AT = new Date('2026-01-01T00:00:00Z');
const plus = (seconds: number) => new Date(AT.getTime() + seconds * 1000);

function describeRateLimits(dialect: 'sqlite' | 'postgres') {
  const databases = useMigratedDatabases(dialect);

  describeRateLimitStoreConformance(dialect, async () => {
    const { store, close } = await databases.openStore();
    return { store: store.rateLimits, close };
  });

  it('shares counts between two stores on one database, every concurrent hit counted', async () => {
    const { store, url, close } = await databases.openStore();
    const second = await openSqlStore(url);
    try {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? store : second).rateLimits.hit('shared', AT, 60)),
      );
      expect(await second.rateLimits.get('shared', plus(1))).toEqual({ hits: 20, resetsAt: plus(60) });
    } finally {
      await second.close();
      await close();
    }
  });
}

describe('SqlRateLimitStore on SQLite', () => describeRateLimits('sqlite'));
describeWithPostgres('SqlRateLimitStore on Postgres', postgres, () => describeRateLimits('postgres'));

describe('read-only units of work on SQLite', () => {
  it('run while another connection holds the write lock, and refuse writes', async () => {
    const database = await createTestDatabase('sqlite');
    await migrateDatabase(database.url);
    // Short lock waits: a unit of work that needed the write lock would fail instead of finishing.
    const store = await openSqlStore(database.url, { busyTimeoutMs: 50, lockWaitMs: 200 });
    const writer = new Database(database.url.slice('sqlite://'.length));
    const user = (n: number): User => ({
      id: `00000000-0000-4000-8000-00000000000${n}`,
      email: `user${n}@example.com`,
      name: 'User',
      created_at: AT.toISOString(),
    });
    try {
      writer.exec('BEGIN IMMEDIATE');
      const found = await store.uow.read(systemScope, (stores) => stores.users.findByEmail('user1@example.com'));
      expect(found).toBeNull();
      await expect(store.uow.run(systemScope, (stores) => stores.users.create(user(1)))).rejects.toMatchObject({
        kind: 'unavailable',
      });
      writer.exec('ROLLBACK');
      await expect(store.uow.read(systemScope, (stores) => stores.users.create(user(2)))).rejects.toThrow(/readonly/i);
      // Read after read: the connection stays read-only between them, and still refuses.
      await expect(store.uow.read(systemScope, (stores) => stores.users.create(user(4)))).rejects.toThrow(/readonly/i);
      // The connection is writable again for the next unit of work, and read-only for the next read.
      await store.uow.run(systemScope, (stores) => stores.users.create(user(3)));
      await expect(store.uow.read(systemScope, (stores) => stores.users.create(user(5)))).rejects.toThrow(/readonly/i);
      expect(
        await store.uow.read(systemScope, (stores) => stores.users.findByEmail('user3@example.com')),
      ).not.toBeNull();
    } finally {
      writer.close();
      await store.close();
      await database.drop();
    }
  });
});
