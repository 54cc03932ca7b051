import type { StoreHarness, TestDatabase, TestDatabaseTemplate, TestDialect } from '@trellis/testkit';
import { createTestDatabaseTemplate, testPostgresPoolSize } from '@trellis/testkit';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { openSqlStore, type SqlStore } from '../../src/index.js';

/** Opens, migrates and closes a store on `url`. */
export async function migrateDatabase(url: string): Promise<void> {
  const store = await openSqlStore(url, { poolSize: testPostgresPoolSize() });
  try {
    await store.migrate();
  } finally {
    await store.close();
  }
}

/** The drops still queued when the last test ends take a while on a busy server. */
const DROP_TIMEOUT_MS = 10 * 60_000;

export interface MigratedDatabases {
  /** A store on a fresh, migrated database of its own; `close` closes it. */
  openStore(): Promise<StoreHarness & { store: SqlStore; url: string }>;
}

/**
 * Fresh migrated databases for the tests of one file. The first is migrated and kept as a
 * template; each test gets a copy, made while the previous test runs, and dropped while the next
 * ones run (on Postgres, CREATE and DROP DATABASE, each with a checkpoint, are what a test mostly
 * waits for). testkit opens few admin connections at once, so the drops queue up rather than
 * open a connection each (dropping them all at the end once opened a hundred at once).
 * Call at the top level of a `describe`: it registers the hooks that make and drop the template.
 */
export function useMigratedDatabases(dialect: TestDialect): MigratedDatabases {
  let template: TestDatabaseTemplate | undefined;
  let next: Promise<TestDatabase> | undefined;
  /** Databases of the running test, dropped after it; those opened in a `beforeAll` live to the end. */
  const used: TestDatabase[] = [];
  const forTheSuite: TestDatabase[] = [];
  let inTest = false;
  const dropping: Promise<void>[] = [];
  const dropInTurn = (databases: TestDatabase[]) => {
    for (const database of databases) {
      const drop = database.drop();
      drop.catch(() => undefined); // surfaces in afterAll
      dropping.push(drop);
    }
  };

  beforeAll(async () => {
    template = await createTestDatabaseTemplate(dialect, migrateDatabase);
  });
  // Registered before the tests' own afterEach hooks, so it runs after them (they close the store).
  beforeEach(() => {
    inTest = true;
  });
  afterEach(() => {
    inTest = false;
    dropInTurn(used.splice(0));
  });
  afterAll(async () => {
    const spare = await next?.catch(() => undefined);
    if (spare) used.push(spare);
    dropInTurn([...used.splice(0), ...forTheSuite.splice(0)]);
    await Promise.all(dropping);
    await template?.drop();
  }, DROP_TIMEOUT_MS);

  return {
    async openStore() {
      if (!template) throw new Error('the template database is not ready');
      const database = await (next ?? template.clone());
      (inTest ? used : forTheSuite).push(database);
      next = template.clone();
      next.catch(() => undefined); // a failed prefetch surfaces when it is awaited
      const store = await openSqlStore(database.url, { poolSize: testPostgresPoolSize() });
      return { store, url: database.url, uow: store.uow, close: () => store.close() };
    },
  };
}
