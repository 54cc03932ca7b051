/**
 * Issue 10 §2: a job's full configuration snapshot is stored once per (owner, config_hash), not
 * once per job; the jobs row keeps only its summary (what lists read). Migration 006 moves the
 * snapshots of existing jobs there.
 */
import { configHash, type ConfigSnapshot, ownerScope } from '@trellis/core';
import {
  checkTestPostgres,
  createTestDatabase,
  describeWithPostgres,
  type TestDatabase,
  type TestDialect,
} from '@trellis/testkit';
import type { Knex } from 'knex';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqlStore } from '../src/index.js';
import { MIGRATIONS, migratorConfig } from '../src/migrations/migrationSource.js';
import { rawConnection, selectRows } from './support/rawSql.js';

const postgres = await checkTestPostgres();

describe('config snapshots on SQLite', () => {
  describeSnapshots('sqlite');
});

describeWithPostgres('config snapshots on Postgres', postgres, () => {
  describeSnapshots('postgres');
});

const BIG_FILE = `# ${'x'.repeat(64 * 1024)}\n`;

function snapshotOf(name: string): ConfigSnapshot {
  return {
    vine: null,
    source: { type: 'inline', files: { 'main.tf': BIG_FILE, 'name.tf': `# ${name}\n` } },
    variables: { secret: { value: 'hunter2', sensitive: true } },
    engine: { name: 'tofu', version: null },
    cloud_identity_id: null,
  };
}

function describeSnapshots(dialect: TestDialect): void {
  let database: TestDatabase | undefined;
  let raw: Knex | undefined;
  afterEach(async () => {
    await raw?.destroy();
    raw = undefined;
    await database?.drop();
    database = undefined;
  });

  async function jobRow(ownerId: string, snapshot: ConfigSnapshot, seconds: number) {
    const id = crypto.randomUUID();
    const createdAt = new Date(Date.UTC(2026, 0, 1, 0, 0, seconds)).toISOString();
    await raw?.('jobs').insert({
      id,
      owner_id: ownerId,
      job_type: 'PLAN',
      status: 'QUEUED',
      config_snapshot: JSON.stringify(snapshot),
      config_hash: configHash(snapshot),
      execution_metadata: '{}',
      created_at: createdAt,
    });
    return id;
  }

  it('moves the snapshots of existing jobs into config_snapshots, once per owner and hash', async () => {
    database = await createTestDatabase(dialect);
    raw = rawConnection(database.url);
    // The database as release 005 left it, with jobs that each carry their whole snapshot.
    const config = migratorConfig(dialect);
    const source = config.migrationSource as Knex.MigrationSource<unknown>;
    await raw.migrate.latest({
      ...config,
      migrationSource: { ...source, getMigrations: async () => MIGRATIONS.slice(0, 5) },
    });
    const [ada, bob] = [crypto.randomUUID(), crypto.randomUUID()];
    for (const [id, email] of [
      [ada, 'ada@example.test'],
      [bob, 'bob@example.test'],
    ]) {
      await raw('users').insert({ id, email, name: email, created_at: new Date().toISOString() });
    }
    const shared = snapshotOf('shared');
    const adaJobs = [
      await jobRow(ada, shared, 1),
      await jobRow(ada, shared, 2),
      await jobRow(ada, snapshotOf('other'), 3),
    ];
    const bobJob = await jobRow(bob, shared, 4);

    const store = await openSqlStore(database.url);
    try {
      await store.migrate();
      const snapshots = await selectRows<{ owner_id: string; config_hash: string }>(
        raw,
        'SELECT owner_id, config_hash FROM config_snapshots ORDER BY owner_id, config_hash',
      );
      // The same snapshot under two owners is two rows: each owner's is its own.
      expect(snapshots).toHaveLength(3);
      expect(snapshots.filter((row) => row.owner_id === ada)).toHaveLength(2);
      const stored = await selectRows<{ config_snapshot: unknown }>(raw, 'SELECT config_snapshot FROM jobs');
      for (const row of stored) {
        const text =
          typeof row.config_snapshot === 'string' ? row.config_snapshot : JSON.stringify(row.config_snapshot);
        expect(text).not.toContain('xxxx');
        expect(text).not.toContain('hunter2');
        expect(JSON.parse(text).source).toEqual({ type: 'inline', file_count: 2 });
      }
      const read = await store.uow.run(ownerScope(ada), (stores) => stores.jobs.get(ada, adaJobs[0] as string));
      expect(read?.config_snapshot).toEqual(shared);
      const listed = await store.uow.run(ownerScope(ada), (stores) => stores.jobs.list(ada));
      expect(listed.map((job) => job.config_snapshot)).toEqual([snapshotOf('other'), shared, shared]);
      const bobs = await store.uow.run(ownerScope(bob), (stores) => stores.jobs.get(bob, bobJob));
      expect(bobs?.config_snapshot).toEqual(shared);
      const page = await store.uow.run(ownerScope(ada), (stores) => stores.jobs.page(ada, { limit: 50 }));
      expect(page.items.map((job) => job.config_snapshot.source)).toEqual(
        Array(3).fill({ type: 'inline', file_count: 2 }),
      );
      expect(JSON.stringify(page)).not.toContain('hunter2');
    } finally {
      await store.close();
    }
  });

  it('stores each distinct snapshot once however many jobs use it', async () => {
    database = await createTestDatabase(dialect);
    raw = rawConnection(database.url);
    const store = await openSqlStore(database.url);
    try {
      await store.migrate();
      const ada = crypto.randomUUID();
      await store.uow.run(ownerScope(ada), (stores) =>
        stores.users.create({ id: ada, email: 'ada@example.test', name: 'Ada', created_at: new Date().toISOString() }),
      );
      const shared = snapshotOf('shared');
      const ids: string[] = [];
      await store.uow.run(ownerScope(ada), async (stores) => {
        for (let i = 0; i < 5; i++) {
          const job = await stores.jobs.create({
            id: crypto.randomUUID(),
            owner_id: ada,
            job_type: 'PLAN',
            status: 'QUEUED',
            config_snapshot: shared,
            config_hash: configHash(shared),
            vine_id: null,
            vineyard_id: null,
            cloud_identity_id: null,
            assigned_worker_id: null,
            claimed_by_worker_id: null,
            plan_job_id: null,
            target_worker_id: null,
            execution_metadata: {},
            error_message: null,
            vine_status_before: null,
            trigger: { type: 'manual' },
            created_by: null,
            caused_by: null,
            claimed_policies: null,
            approval: null,
            policy_override: null,
            created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
            claimed_at: null,
            finished_at: null,
          });
          expect(job.config_snapshot).toEqual(shared);
          ids.push(job.id);
        }
      });
      const [count] = await selectRows<{ n: number | string }>(raw, 'SELECT count(*) AS n FROM config_snapshots');
      expect(Number(count?.n)).toBe(1);
      const [size] = await selectRows<{ n: number | string }>(
        raw,
        'SELECT sum(length(CAST(config_snapshot AS text))) AS n FROM jobs',
      );
      expect(Number(size?.n)).toBeLessThan(BIG_FILE.length);
      const read = await store.uow.run(ownerScope(ada), (stores) => stores.jobs.get(ada, ids[4] as string));
      expect(read?.config_snapshot).toEqual(shared);
    } finally {
      await store.close();
    }
  });

  it("reads a job with its owner's full snapshot, and no other owner's job", async () => {
    database = await createTestDatabase(dialect);
    const store = await openSqlStore(database.url);
    try {
      await store.migrate();
      const owners = [crypto.randomUUID(), crypto.randomUUID()];
      const snapshots = [snapshotOf('ada'), snapshotOf('bob')];
      const ids: string[] = [];
      for (const [i, owner] of owners.entries()) {
        const snapshot = snapshots[i] as ConfigSnapshot;
        await store.uow.run(ownerScope(owner), async (stores) => {
          await stores.users.create({
            id: owner,
            email: `u${i}@example.test`,
            name: `U${i}`,
            created_at: new Date().toISOString(),
          });
          const job = await stores.jobs.create(planJob(owner, snapshot));
          ids.push(job.id);
        });
      }
      for (const [i, owner] of owners.entries()) {
        const read = await store.uow.read(ownerScope(owner), (stores) => stores.jobs.get(owner, ids[i] as string));
        expect(read?.config_snapshot).toEqual(snapshots[i]);
        expect(read?.config_hash).toBe(configHash(snapshots[i] as ConfigSnapshot));
        const other = owners[1 - i] as string;
        const foreign = await store.uow.read(ownerScope(owner), (stores) =>
          stores.jobs.get(other, ids[1 - i] as string),
        );
        expect(foreign).toBeNull();
      }
    } finally {
      await store.close();
    }
  });
}

function planJob(ownerId: string, snapshot: ConfigSnapshot) {
  return {
    id: crypto.randomUUID(),
    owner_id: ownerId,
    job_type: 'PLAN' as const,
    status: 'QUEUED' as const,
    config_snapshot: snapshot,
    config_hash: configHash(snapshot),
    vine_id: null,
    vineyard_id: null,
    cloud_identity_id: null,
    assigned_worker_id: null,
    claimed_by_worker_id: null,
    plan_job_id: null,
    target_worker_id: null,
    execution_metadata: {},
    error_message: null,
    vine_status_before: null,
    trigger: { type: 'manual' as const },
    created_by: null,
    caused_by: null,
    claimed_policies: null,
    approval: null,
    policy_override: null,
    created_at: new Date().toISOString(),
    claimed_at: null,
    finished_at: null,
  };
}
