import type { StoreHarness, TestDatabase, TestDatabaseTemplate, TestDialect } from '@trellis/testkit';
import { createTestDatabaseTemplate } from '@trellis/testkit';
import { afterAll, beforeAll } from 'vitest';
import { openSqlStore, type SqlStore } from '../../src/index.js';

/** Opens, migrates and closes a store on `url`. */
export async function migrateDatabase(url: string): Promise<void> {
  const store = await openSqlStore(url);
  try {
    await store.migrate();
  } finally {
    await store.close();
  }
}

export interface MigratedDatabases {
  /** A store on a fresh, migrated database of its own; `close` closes it. */
  openStore(): Promise<StoreHarness & { store: SqlStore; url: string }>;
}

/**
 * Fresh migrated databases for the tests of one file. The first is migrated and kept as a
 * template; each test gets a copy, made while the previous test runs, and the copies are dropped
 * together at the end (on Postgres, CREATE and DROP DATABASE are what a test mostly waits for).
 * Call at the top level of a `describe`: it registers the hooks that make and drop the template.
 */
export function useMigratedDatabases(dialect: TestDialect): MigratedDatabases {
  let template: TestDatabaseTemplate | undefined;
  let next: Promise<TestDatabase> | undefined;
  const used: TestDatabase[] = [];

  beforeAll(async () => {
    template = await createTestDatabaseTemplate(dialect, migrateDatabase);
  });
  afterAll(async () => {
    const spare = await next?.catch(() => undefined);
    if (spare) used.push(spare);
    await Promise.all(used.map((database) => database.drop()));
    await template?.drop();
  });

  return {
    async openStore() {
      if (!template) throw new Error('the template database is not ready');
      const database = await (next ?? template.clone());
      used.push(database);
      next = template.clone();
      next.catch(() => undefined); // a failed prefetch surfaces when it is awaited
      const store = await openSqlStore(database.url);
      return { store, url: database.url, uow: store.uow, close: () => store.close() };
    },
  };
}
