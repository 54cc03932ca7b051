/**
 * Expand, then contract (docs/operations.md, Upgrades): during a rolling upgrade a replica of the
 * previous release runs on the database the new release migrated, so from m020 on a migration
 * takes nothing away unless it declares itself a contract step. Checked on the SQL each migration
 * really sends to Postgres, the database replicas share.
 */
import {
  checkTestPostgres,
  createTestDatabase,
  describeWithPostgres,
  type TestDatabase,
  type TestDialect,
} from '@trellis/testkit';
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqlStore } from '../src/index.js';
import { MIGRATIONS, migratorConfig } from '../src/migrations/migrationSource.js';
import type { TrellisMigration } from '../src/migrations/TrellisMigration.js';
import { destructiveStatements } from './support/destructiveDdl.js';
import { rawConnection, selectRows } from './support/rawSql.js';
import { seedEverything } from './support/seedEverything.js';

/** The first migration released under the expand/contract rule. */
const FIRST_CHECKED = '020';

const postgres = await checkTestPostgres();

describe('destructiveStatements', () => {
  it.each([
    ['alter table "jobs" drop column "plan_id"', 'drops a column'],
    ['DROP TABLE IF EXISTS "old_things"', 'drops a table'],
    ['alter table "jobs" rename column "status" to "state"', 'renames'],
    ['ALTER TABLE jobs RENAME TO job_rows', 'renames'],
    ['alter table "jobs" alter column "attempts" type bigint using ("attempts"::bigint)', 'changes a type'],
    ["ALTER TYPE job_status ADD VALUE 'PAUSED'", 'changes a type'],
    [
      'alter table "jobs" add column "priority" integer not null',
      'makes an existing column NOT NULL without a default',
    ],
    ['alter table "jobs" alter column "priority" set not null', 'makes an existing column NOT NULL without a default'],
    ['DROP FUNCTION claim_next_job(uuid)', 'drops a view, function or type'],
  ])('flags %s', (sql, rule) => {
    expect(destructiveStatements([sql])).toEqual([{ rule, sql }]);
  });

  it.each([
    'alter table "jobs" add column "priority" integer not null default \'0\'',
    'alter table "jobs" add column "note" text',
    'create index "jobs_priority_index" on "jobs" ("priority")',
    'DROP POLICY IF EXISTS owner_rows ON jobs',
    'DROP TRIGGER IF EXISTS jobs_audit ON jobs',
    'alter table "jobs" alter column "note" drop not null',
    'CREATE OR REPLACE FUNCTION f() RETURNS void AS $$ BEGIN DROP TABLE scratch; END $$ LANGUAGE plpgsql',
  ])('lets %s pass', (sql) => {
    expect(destructiveStatements([sql])).toEqual([]);
  });

  it('lets a migration do what it likes to a table it creates itself', () => {
    expect(
      destructiveStatements([
        'create table "outbox" ("id" uuid)',
        'alter table "outbox" add column "kind" text not null',
        'alter table "outbox" alter column "id" set not null',
      ]),
    ).toEqual([]);
  });
});

describeWithPostgres('migrations on Postgres', postgres, () => {
  let database: TestDatabase | undefined;
  let raw: Knex | undefined;
  /** The SQL each migration sent, by migration name. */
  const sent = new Map<string, string[]>();

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    raw = rawConnection(database.url);
    let running: string | undefined;
    raw.on('query', (query: { sql: string }) => {
      if (running !== undefined) sent.get(running)?.push(query.sql);
    });
    const recorded: TrellisMigration[] = MIGRATIONS.map((migration) => ({
      ...migration,
      up: async (knex, dialect) => {
        running = migration.name;
        sent.set(migration.name, []);
        try {
          await migration.up(knex, dialect);
        } finally {
          running = undefined;
        }
      },
    }));
    await raw.migrate.latest(migratorConfig('postgres', recorded));
  }, 120_000);

  afterAll(async () => {
    await raw?.destroy();
    await database?.drop();
  });

  it(`from ${FIRST_CHECKED} on, only a declared contract step takes anything away`, () => {
    for (const migration of MIGRATIONS.filter((m) => m.name >= FIRST_CHECKED)) {
      const statements = sent.get(migration.name);
      expect(statements, `${migration.name} sent no SQL the test saw`).toBeDefined();
      if (migration.contract) {
        expect(migration.contract.reason.trim(), `${migration.name}: a contract step says why`).not.toBe('');
      } else {
        expect(destructiveStatements(statements ?? []), `${migration.name} is not additive`).toEqual([]);
      }
    }
  });

  it('flags what the releases before the rule took away (the check is not blind)', () => {
    expect([...sent.keys()]).toEqual(MIGRATIONS.map((m) => m.name));
    // m009 replaced claim_next_job's signature: a replica of release 008 calling the old one
    // would have failed mid-upgrade. Under the rule it would have added the new function beside it.
    const flagged = MIGRATIONS.filter((m) => m.name < FIRST_CHECKED).flatMap((m) =>
      destructiveStatements(sent.get(m.name) ?? []).map(({ rule }) => `${m.name}: ${rule}`),
    );
    expect(flagged).toEqual(['009_claim_rules: drops a view, function or type']);
  });
});

/** What the next release might add: a column on the busiest table, and its index. */
const NEXT_RELEASE: TrellisMigration = {
  name: '999_test_next_release',
  async up(knex) {
    await knex.schema.alterTable('jobs', (table) => {
      table.text('upgrade_note');
      table.index(['upgrade_note'], 'jobs_upgrade_note_index');
    });
  },
};

describe('an older release on a database a newer one migrated, on SQLite', () => {
  describeOlderRelease('sqlite');
});

describeWithPostgres('an older release on a database a newer one migrated, on Postgres', postgres, () => {
  describeOlderRelease('postgres');
});

function describeOlderRelease(dialect: TestDialect): void {
  it('migrates (nothing to do), warns that it runs beside a newer release, and keeps working', async () => {
    const database = await createTestDatabase(dialect);
    try {
      const newer = await openSqlStore(database.url, { migrations: [...MIGRATIONS, NEXT_RELEASE] });
      try {
        await newer.migrate();
      } finally {
        await newer.close();
      }
      const warnings: string[] = [];
      const older = await openSqlStore(database.url, {
        logger: { warn: (message) => warnings.push(message), error: (message) => warnings.push(message) },
      });
      try {
        await older.migrate();
        expect(warnings).toEqual([
          expect.stringMatching(/1 migration\(s\) newer than this release \(999_test_next_release\)/),
        ]);
        // Reads and writes on the expanded table.
        const seeded = await seedEverything(older.uow);
        expect(seeded.jobId).toBeTruthy();
      } finally {
        await older.close();
      }
      const raw = rawConnection(database.url);
      try {
        const applied = await selectRows<{ name: string }>(raw, 'SELECT name FROM trellis_migrations ORDER BY id');
        expect(applied.map((row) => row.name)).toEqual([...MIGRATIONS, NEXT_RELEASE].map((m) => m.name));
      } finally {
        await raw.destroy();
      }
    } finally {
      await database.drop();
    }
  }, 120_000);
}
