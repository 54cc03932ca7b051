/**
 * Migration 025 (issue 24): the known results of jobs reported before they were typed are judged
 * once: a malformed one is left out, a list keeps its well-formed entries, every other field
 * stays.
 */
import { ownerScope } from '@trellis/core';
import {
  checkTestPostgres,
  createTestDatabase,
  describeWithPostgres,
  type TestDatabase,
  type TestDialect,
} from '@trellis/testkit';
import type { Knex } from 'knex';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqlStore, type SqlStore } from '../src/index.js';
import { MIGRATIONS, migratorConfig } from '../src/migrations/migrationSource.js';
import { rawConnection } from './support/rawSql.js';
import { seedEverything } from './support/seedEverything.js';

const postgres = await checkTestPostgres();

describe('migration 025 on SQLite', () => {
  describeMigration('sqlite');
});

describeWithPostgres('migration 025 on Postgres', postgres, () => {
  describeMigration('postgres');
});

const POLICY = {
  policy_id: '00000000-0000-4000-8000-00000000a001',
  version: 1,
  name: 'tags',
  enforcement: 'mandatory',
  passed: true,
  messages: [],
};

/** What each job held before, and what it holds after. */
const CASES = [
  {
    before: { step: 'plan', plan_summary: { add: 'two', change: 0, destroy: 0 }, cluster_endpoint: 'not a url' },
    after: { step: 'plan' },
  },
  {
    before: { policy_results: [POLICY, { name: 'half a result' }], resource_changes_omitted: -3 },
    after: { policy_results: [POLICY] },
  },
  {
    before: { plan_summary: { add: 1, change: 2, destroy: 3 }, outputs: { url: 'https://x.example.test' }, n: 1 },
    after: { plan_summary: { add: 1, change: 2, destroy: 3 }, outputs: { url: 'https://x.example.test' }, n: 1 },
  },
  { before: { note: 'names no result' }, after: { note: 'names no result' } },
];

function describeMigration(dialect: TestDialect): void {
  let database: TestDatabase | undefined;
  let raw: Knex | undefined;
  let store: SqlStore | undefined;
  afterEach(async () => {
    await store?.close();
    await raw?.destroy();
    await database?.drop();
    store = undefined;
    raw = undefined;
    database = undefined;
  });

  it('leaves out malformed known results of old jobs and keeps everything else', async () => {
    database = await createTestDatabase(dialect);
    raw = rawConnection(database.url);
    const config = migratorConfig(dialect);
    const source = config.migrationSource as Knex.MigrationSource<unknown>;
    const m025 = MIGRATIONS.findIndex((migration) => migration.name === '025_typed_job_results');
    expect(m025).toBeGreaterThan(0);
    const before = MIGRATIONS.filter((_migration, index) => index !== m025);
    await raw.migrate.latest({ ...config, migrationSource: { ...source, getMigrations: async () => before } });
    store = await openSqlStore(database.url);
    const seeded = [];
    for (const { before: metadata } of CASES) {
      const owner = await seedEverything(store.uow);
      await raw('jobs')
        .where({ id: owner.jobId })
        .update({ execution_metadata: JSON.stringify(metadata) });
      seeded.push(owner);
    }

    await raw.migrate.latest(config);

    for (const [index, owner] of seeded.entries()) {
      const job = await store.uow.read(ownerScope(owner.id), (stores) => stores.jobs.get(owner.id, owner.jobId));
      expect(job?.execution_metadata).toEqual(CASES[index]?.after);
    }
  });
}
