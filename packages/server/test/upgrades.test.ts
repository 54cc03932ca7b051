/**
 * Who changes the schema, and a server on a schema newer than its release (docs/operations.md,
 * Upgrades), with the real `trellis-server` binary on SQLite.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS, openSqlStore, type TrellisMigration } from '@trellis/store-sql';
import { SERVER_BIN, startServerProcess } from '@trellis/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BOOTSTRAP_TOKEN, JWT_SECRET } from './support/controlPlane.js';

/** A stand-in for the next release's migration: additive, as the rule wants. */
const NEXT_RELEASE: TrellisMigration = {
  name: '999_test_next_release',
  async up(knex) {
    await knex.schema.alterTable('jobs', (table) => table.text('upgrade_note'));
  },
};

/** Runs `trellis-server <args>` to its end. */
function runServer(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [SERVER_BIN, ...args], {
    env: { ...process.env, TRELLIS_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (data) => {
    output += data;
  });
  child.stderr.on('data', (data) => {
    output += data;
  });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, output })));
}

describe('trellis-server and the schema', () => {
  let dataDir: string;
  let env: Record<string, string>;
  let databaseUrl: string;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'trellis-upgrades-'));
    databaseUrl = `sqlite://${join(dataDir, 'trellis.db')}`;
    env = {
      TRELLIS_DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      CLI_JWT_SECRET: JWT_SECRET,
      TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
    };
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  async function pending(): Promise<string[]> {
    const store = await openSqlStore(databaseUrl);
    try {
      return await store.pendingMigrations();
    } finally {
      await store.close();
    }
  }

  it('with TRELLIS_MIGRATE_ON_START=false, only `migrate` changes the schema; serve refuses a database behind it', async () => {
    const refused = await runServer([], { ...env, TRELLIS_MIGRATE_ON_START: 'false', PORT: '0' });
    expect(refused.code).toBe(1);
    expect(refused.output).toContain(`the database lacks ${MIGRATIONS.length} migration(s) of this release`);
    expect(refused.output).toContain('run `trellis-server migrate` first');
    expect(await pending()).toEqual(MIGRATIONS.map((migration) => migration.name));

    const migrated = await runServer(['migrate'], env);
    expect(migrated).toMatchObject({ code: 0, output: expect.stringContaining('migrations applied') });
    expect(await pending()).toEqual([]);

    const server = await startServerProcess({ ...env, TRELLIS_MIGRATE_ON_START: 'false' });
    expect(await server.stop()).toBe(0);
  }, 120_000);

  it('serves, and migrates, on a database a newer release migrated, saying so in its log', async () => {
    const newer = await openSqlStore(databaseUrl, { migrations: [...MIGRATIONS, NEXT_RELEASE] });
    try {
      await newer.migrate();
    } finally {
      await newer.close();
    }
    const migrated = await runServer(['migrate'], env);
    expect(migrated.code).toBe(0);
    expect(migrated.output).toContain('newer than this release (999_test_next_release)');

    for (const migrateOnStart of ['true', 'false']) {
      const server = await startServerProcess({ ...env, TRELLIS_MIGRATE_ON_START: migrateOnStart });
      const health = await fetch(`${server.url}/readyz`);
      expect(health.status).toBe(200);
      expect(await server.stop()).toBe(0);
    }
  }, 120_000);
});
