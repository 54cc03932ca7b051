/**
 * `migrate()` (DESIGN §5): replicas start together, so several processes migrate one fresh
 * database at once; all succeed, each migration runs once, and running it again changes nothing.
 */
import {
  checkTestPostgres,
  createTestDatabase,
  describeWithPostgres,
  type TestDatabase,
  type TestDialect,
  testPostgresPoolSize,
} from '@trellis/testkit';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openSqlStore } from '../src/index.js';
import { MIGRATIONS } from '../src/migrations/migrationSource.js';
import { requireFreshBuild, runFixture } from './support/children.js';
import { rawConnection, selectRows } from './support/rawSql.js';

const PROCESSES = 4;
const INSTANCES = 3;

const postgres = await checkTestPostgres();

describe('migrate on SQLite', () => {
  describeMigrate('sqlite');
});

describeWithPostgres('migrate on Postgres', postgres, () => {
  describeMigrate('postgres');
});

function describeMigrate(dialect: TestDialect): void {
  let database: TestDatabase | undefined;
  beforeAll(() => requireFreshBuild());
  afterEach(async () => {
    await database?.drop();
    database = undefined;
  });

  it(`${PROCESSES} processes and ${INSTANCES} in-process stores migrating one fresh database at once all succeed, once`, async () => {
    database = await createTestDatabase(dialect);
    const url = database.url;
    const stores = await Promise.all(Array.from({ length: INSTANCES }, () => openSqlStore(url, { poolSize: 2 })));
    try {
      const outcomes = await Promise.all([
        ...Array.from({ length: PROCESSES }, () => runFixture('migrator.mjs', [url])),
        ...stores.map((store) => store.migrate().then(() => 'migrated\n')),
      ]);
      expect(outcomes).toEqual(Array(PROCESSES + INSTANCES).fill('migrated\n'));
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
    const first = await migrationState(url);
    expect(first.applied).toEqual(MIGRATIONS.map((migration) => ({ name: migration.name, batch: 1 })));
    expect(first.lockRows).toEqual([{ is_locked: 0 }]);

    const again = await openSqlStore(url, { poolSize: testPostgresPoolSize() });
    try {
      await again.migrate();
      await again.migrate();
      await again.uow.check();
    } finally {
      await again.close();
    }
    expect(await migrationState(url)).toEqual(first);
  }, 120_000);
}

async function migrationState(url: string) {
  const raw = rawConnection(url);
  try {
    const applied = await selectRows<{ name: string; batch: number }>(
      raw,
      'SELECT name, batch FROM trellis_migrations ORDER BY id',
    );
    const lockRows = await selectRows<{ is_locked: number }>(raw, 'SELECT is_locked FROM trellis_migrations_lock');
    return {
      applied: applied.map((row) => ({ name: row.name, batch: Number(row.batch) })),
      lockRows: lockRows.map((row) => ({ is_locked: Number(row.is_locked) })),
    };
  } finally {
    await raw.destroy();
  }
}
