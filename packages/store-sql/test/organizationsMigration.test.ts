/**
 * Migration 010 (issue 12): an owner may be an organization, so `owner_id` stops referring to
 * users. On SQLite that rebuilds eleven tables (SQLite cannot drop a constraint), with foreign
 * keys on: every row, index (partial ones included), other foreign key, check and AUTOINCREMENT
 * counter must come through unchanged. On Postgres the constraints are dropped in place.
 */
import { randomUUID } from 'node:crypto';
import { ConflictError, ownerScope, systemScope } from '@trellis/core';
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
import { rawConnection, selectRows } from './support/rawSql.js';
import { seedEverything } from './support/seedEverything.js';

const OWNER_ID_TABLES = [
  'vineyards',
  'cloud_identities',
  'vines',
  'vine_components',
  'workers',
  'jobs',
  'config_snapshots',
  'log_chunks',
  'plan_artifacts',
  'state_versions',
  'state_locks',
];
/**
 * The tables release 009 had (the store's tables of then; `rate_limits` is no store's), frozen
 * here: tables added by later migrations never belong to this list.
 */
const BEFORE_M010 = [
  'users',
  'identities',
  'cli_logins',
  'refresh_tokens',
  'vineyards',
  'cloud_identities',
  'vines',
  'vine_components',
  'workers',
  'jobs',
  'config_snapshots',
  'log_chunks',
  'plan_artifacts',
  'worker_releases',
  'state_versions',
  'state_locks',
] as const;

const postgres = await checkTestPostgres();

describe('migration 010 on SQLite', () => {
  describeMigration('sqlite');
});

describeWithPostgres('migration 010 on Postgres', postgres, () => {
  describeMigration('postgres');
});

interface SchemaSnapshot {
  /** Every index and trigger (name → definition), and each table's definition. */
  objects: Map<string, string>;
  /** Every foreign key as "table.column -> target.column". */
  foreignKeys: string[];
  /** Every other constraint (primary keys, uniques, checks), as the database names them. */
  constraints: string[];
}

function describeMigration(dialect: TestDialect): void {
  let database: TestDatabase | undefined;
  let raw: Knex | undefined;
  let store: SqlStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
    await raw?.destroy();
    raw = undefined;
    await database?.drop();
    database = undefined;
  });

  it('keeps every row, index, other foreign key and constraint; owner_id stops referring to users', async () => {
    database = await createTestDatabase(dialect);
    raw = rawConnection(database.url);
    // The database as release 009 left it, with a row in every table.
    const config = migratorConfig(dialect);
    const source = config.migrationSource as Knex.MigrationSource<unknown>;
    const m010 = MIGRATIONS.findIndex((migration) => migration.name === '010_organizations');
    expect(m010).toBe(9);
    /** Migrates up to and including `last` (an index into MIGRATIONS), as that release would. */
    const migrateThrough = (last: number) =>
      (raw as Knex).migrate.latest({
        ...config,
        migrationSource: { ...source, getMigrations: async () => MIGRATIONS.slice(0, last + 1) },
      });
    await migrateThrough(m010 - 1);
    store = await openSqlStore(database.url);
    // Today's stores see only rows not deleted (m041's `deleted_at`): the markers are there while
    // the stores seed, and gone again before anything is compared, so m010 meets release 009's schema.
    const markers = ['vines', 'vineyards'] as const;
    for (const table of markers) await raw.raw(`ALTER TABLE ${table} ADD COLUMN deleted_at text`);
    const ada = await seedEverything(store.uow);
    const bob = await seedEverything(store.uow);
    // A vineyard made and deleted: the AUTOINCREMENT counter is past the highest row.
    await store.uow.run(ownerScope(ada.id), (stores) =>
      stores.vineyards.create({
        id: randomUUID(),
        owner_id: ada.id,
        name: 'gone',
        created_at: new Date().toISOString(),
      }),
    );
    await raw('vineyards').where({ name: 'gone' }).delete();
    // Plain SQL: knex would rebuild a SQLite table to drop a column, rewriting its CREATE text.
    for (const table of markers) await raw.raw(`ALTER TABLE ${table} DROP COLUMN deleted_at`);
    const [counterBefore] = await selectRows<{ seq: number | string }>(
      raw,
      dialect === 'sqlite'
        ? "SELECT seq FROM sqlite_sequence WHERE name = 'vineyards'"
        : 'SELECT last_value AS seq FROM vineyards_seq_seq',
    );

    const rowsBefore = await allRows(raw, BEFORE_M010);
    const schemaBefore = await schemaOf(raw, dialect);
    expect(schemaBefore.objects.get('index jobs_log_retention_idx')).toMatch(/log_bytes > 0/);
    for (const table of OWNER_ID_TABLES) {
      expect(schemaBefore.foreignKeys, table).toContain(`${table}.owner_id -> users.id`);
    }

    await migrateThrough(m010);

    expect(await allRows(raw, BEFORE_M010)).toEqual(rowsBefore);
    const schemaAfter = await schemaOf(raw, dialect);
    // Every foreign key but owner_id -> users is still there, and only the new tables' are new.
    const dropped = OWNER_ID_TABLES.map((table) => `${table}.owner_id -> users.id`);
    expect(schemaAfter.foreignKeys.filter((key) => !key.startsWith('org_members.'))).toEqual(
      schemaBefore.foreignKeys.filter((key) => !dropped.includes(key)),
    );
    expect(schemaAfter.foreignKeys.filter((key) => key.startsWith('org_members.'))).toEqual([
      'org_members.org_id -> orgs.id',
      'org_members.user_id -> users.id',
    ]);
    expect(schemaAfter.constraints.filter((name) => !/^(orgs|org_members): /.test(name))).toEqual(
      schemaBefore.constraints,
    );
    // Every index and trigger, word for word; tables differ by the one clause (and SQLite's quoting).
    for (const [name, definition] of schemaBefore.objects) {
      const after = schemaAfter.objects.get(name);
      if (!name.startsWith('table ') || dialect === 'postgres') {
        expect(after, name).toBe(definition);
        continue;
      }
      const table = name.slice('table '.length);
      const expected = OWNER_ID_TABLES.includes(table)
        ? definition.replace(', foreign key(`owner_id`) references `users`(`id`)', '')
        : definition;
      expect(after?.replace(`CREATE TABLE "${table}"`, `CREATE TABLE \`${table}\``), name).toBe(expected);
    }
    expect([...schemaAfter.objects.keys()].filter((name) => !schemaBefore.objects.has(name)).sort()).toEqual(
      dialect === 'sqlite'
        ? [
            'index org_members_id_unique',
            'index org_members_org_email_unique',
            'index org_members_org_idx',
            'index org_members_user_idx',
            'index orgs_name_unique',
            'table org_members',
            'table orgs',
          ]
        : [
            'index org_members_id_unique',
            'index org_members_org_email_unique',
            'index org_members_org_idx',
            'index org_members_pkey',
            'index org_members_user_idx',
            'index orgs_name_unique',
            'index orgs_pkey',
          ],
    );
    if (dialect === 'sqlite') {
      const [integrity] = await selectRows<{ integrity_check: string }>(raw, 'PRAGMA integrity_check');
      expect(integrity?.integrity_check).toBe('ok');
      expect(await selectRows(raw, 'PRAGMA foreign_key_check')).toEqual([]);
      const [counterAfter] = await selectRows<{ seq: number | string }>(
        raw,
        "SELECT seq FROM sqlite_sequence WHERE name = 'vineyards'",
      );
      expect(Number(counterAfter?.seq)).toBe(Number(counterBefore?.seq));
    }

    // The stores work on the migrated data, foreign keys are enforced again, and an organization owns rows.
    for (const table of markers) await raw.raw(`ALTER TABLE ${table} ADD COLUMN deleted_at text`);
    const next = await store.uow.run(ownerScope(ada.id), (stores) =>
      stores.vineyards.create({
        id: randomUUID(),
        owner_id: ada.id,
        name: 'next',
        created_at: new Date().toISOString(),
      }),
    );
    const [seq] = await selectRows<{ seq: number | string }>(raw, 'SELECT seq FROM vineyards WHERE id = ?', [next.id]);
    expect(Number(seq?.seq)).toBeGreaterThan(Number(counterBefore?.seq));
    const missingVineyard = await store.uow
      .run(ownerScope(ada.id), (stores) =>
        stores.vines.create({
          id: randomUUID(),
          owner_id: ada.id,
          vineyard_id: randomUUID(),
          name: 'orphan',
          project_name: 'orphan',
          cloud_identity_id: null,
          source: { type: 'inline', files: {} },
          variables: {},
          engine: { name: 'tofu', version: null },
          status: 'NEW',
          status_message: null,
          drift_detection: null,
          next_drift_check_at: null,
          drift: null,
          triggers: { after: [] },
          approval: null,
          created_at: new Date().toISOString(),
          updated_at: new Date().toISOString(),
        }),
      )
      .catch((error: unknown) => error);
    expect(missingVineyard).toBeInstanceOf(ConflictError);
    expect(missingVineyard).toMatchObject({ code: 'referenced_record_missing' });
    const org = randomUUID();
    await store.uow.run(ownerScope(org), async (stores) => {
      await stores.orgs.create({ id: org, name: 'Acme', created_at: new Date().toISOString() });
      await stores.vineyards.create({
        id: randomUUID(),
        owner_id: org,
        name: 'prod',
        created_at: new Date().toISOString(),
      });
    });
    expect(await store.uow.run(systemScope, (stores) => stores.vineyards.list(org))).toHaveLength(1);
    expect(await store.uow.run(ownerScope(bob.id), (stores) => stores.jobs.get(bob.id, bob.jobId))).not.toBeNull();

    // Running it again changes nothing.
    for (const table of markers) await raw.raw(`ALTER TABLE ${table} DROP COLUMN deleted_at`);
    await migrateThrough(m010);
    expect((await schemaOf(raw, dialect)).objects).toEqual(schemaAfter.objects);
  });
}

/** Every row of every table, as sorted JSON, so the comparison ignores row order. */
async function allRows(knex: Knex, tables: readonly string[]): Promise<Record<string, string[]>> {
  const rows: Record<string, string[]> = {};
  for (const table of tables) {
    const found = await selectRows<Record<string, unknown>>(knex, `SELECT * FROM ${table}`);
    rows[table] = found.map((row) => JSON.stringify(row)).sort();
    if (table !== 'cli_logins' || found.length > 0) expect(found.length, table).toBeGreaterThan(0);
  }
  return rows;
}

async function schemaOf(knex: Knex, dialect: TestDialect): Promise<SchemaSnapshot> {
  const objects = new Map<string, string>();
  const foreignKeys: string[] = [];
  const constraints: string[] = [];
  if (dialect === 'sqlite') {
    const rows = await selectRows<{ type: string; name: string; sql: string | null }>(
      knex,
      "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE 'trellis_migrations%'",
    );
    for (const row of rows) if (row.sql !== null) objects.set(`${row.type} ${row.name}`, row.sql);
    const tables = rows.filter((row) => row.type === 'table').map((row) => row.name);
    for (const table of tables) {
      const keys = await selectRows<{ from: string; table: string; to: string; on_delete: string }>(
        knex,
        `SELECT * FROM pragma_foreign_key_list('${table}')`,
      );
      for (const key of keys) foreignKeys.push(`${table}.${key.from} -> ${key.table}.${key.to}`);
      // Automatic indexes (primary keys and inline uniques) have no SQL: list them by name.
      const indexes = await selectRows<{ name: string; origin: string; partial: number }>(
        knex,
        `SELECT name, origin, partial FROM pragma_index_list('${table}') WHERE origin <> 'c'`,
      );
      for (const index of indexes) constraints.push(`${table}: ${index.name} (${index.origin})`);
    }
  } else {
    const indexes = await selectRows<{ indexname: string; indexdef: string }>(
      knex,
      "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename NOT LIKE 'trellis_migrations%'",
    );
    for (const index of indexes) objects.set(`index ${index.indexname}`, index.indexdef);
    const triggers = await selectRows<{ tgname: string; def: string }>(
      knex,
      'SELECT tgname, pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE NOT tgisinternal',
    );
    for (const trigger of triggers) objects.set(`trigger ${trigger.tgname}`, trigger.def);
    const keys = await selectRows<{ key: string }>(
      knex,
      `SELECT c.conrelid::regclass::text || '.' || a.attname || ' -> ' || c.confrelid::regclass::text || '.' || f.attname AS key
       FROM pg_constraint c
       JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
       JOIN pg_attribute f ON f.attrelid = c.confrelid AND f.attnum = c.confkey[1]
       WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace`,
    );
    foreignKeys.push(...keys.map((row) => row.key));
    const others = await selectRows<{ name: string }>(
      knex,
      `SELECT conrelid::regclass::text || ': ' || conname || ' ' || pg_get_constraintdef(oid) AS name FROM pg_constraint
       WHERE contype <> 'f' AND connamespace = current_schema()::regnamespace AND conrelid <> 0
         AND conrelid::regclass::text NOT LIKE 'trellis_migrations%'`,
    );
    constraints.push(...others.map((row) => row.name));
  }
  foreignKeys.sort();
  constraints.sort();
  return { objects, foreignKeys, constraints };
}
