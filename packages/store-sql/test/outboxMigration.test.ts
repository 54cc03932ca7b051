/**
 * Migration 044 (issue 24): notification deliveries and git provider feedback move from their two
 * tables into the one outbox, every row and in written order (feedback keeps which item is the
 * newer), and are read, claimed and counted from there; the old tables stay, empty.
 */
import { randomUUID } from 'node:crypto';
import { ownerScope, systemScope } from '@trellis/core';
import {
  checkTestPostgres,
  createTestDatabase,
  describeWithPostgres,
  newNotification,
  type TestDatabase,
  type TestDialect,
} from '@trellis/testkit';
import type { Knex } from 'knex';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqlStore, type SqlStore } from '../src/index.js';
import { MIGRATIONS, migratorConfig } from '../src/migrations/migrationSource.js';
import { rawConnection, selectRows } from './support/rawSql.js';
import { seedEverything } from './support/seedEverything.js';

const postgres = await checkTestPostgres();

describe('migration 044 on SQLite', () => {
  describeMigration('sqlite');
});

describeWithPostgres('migration 044 on Postgres', postgres, () => {
  describeMigration('postgres');
});

const at = (second: number) => new Date(Date.UTC(2026, 4, 1, 0, 0, second)).toISOString();

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

  it('moves every delivery and feedback item into the outbox, where the stores find, claim and count them', async () => {
    database = await createTestDatabase(dialect);
    raw = rawConnection(database.url);
    const config = migratorConfig(dialect);
    const source = config.migrationSource as Knex.MigrationSource<unknown>;
    const m044 = MIGRATIONS.findIndex((migration) => migration.name === '044_outbox');
    expect(m044).toBeGreaterThan(0);
    const before = MIGRATIONS.slice(0, m044);
    await raw.migrate.latest({ ...config, migrationSource: { ...source, getMigrations: async () => before } });
    store = await openSqlStore(database.url);
    const owner = await seedEverything(store.uow);
    const notification = await store.uow.run(ownerScope(owner.id), (stores) =>
      stores.notifications.create(newNotification(owner.id)),
    );

    const attempt = { at: at(2), status_code: 503, error: 'HTTP 503', duration_ms: 7, response_excerpt: 'busy' };
    const pending = {
      id: randomUUID(),
      owner_id: owner.id,
      notification_id: notification.id,
      event: 'job.failed' as const,
      payload: { event: 'job.failed', job: { id: owner.jobId } },
      status: 'pending' as const,
      attempts: [attempt],
      created_at: at(1),
      next_attempt_at: at(30),
      finished_at: null,
    };
    const delivered = {
      ...pending,
      id: randomUUID(),
      status: 'delivered' as const,
      finished_at: at(3),
      created_at: at(2),
    };
    for (const delivery of [pending, delivered]) {
      await raw('notification_deliveries').insert({
        ...delivery,
        payload: JSON.stringify(delivery.payload),
        attempts: JSON.stringify(delivery.attempts),
      });
    }
    const status = (state: 'pending' | 'success', second: number) => ({
      id: randomUUID(),
      owner_id: owner.id,
      job_id: owner.jobId,
      vine_id: owner.vineId,
      provider: 'github' as const,
      kind: 'status' as const,
      subject: `status:acme/infra:${'a'.repeat(40)}`,
      payload: {
        kind: 'status' as const,
        repository: 'acme/infra',
        sha: 'a'.repeat(40),
        status: { state, context: 'trellis/v/net', description: state, target_url: 'https://t/jobs/1' },
      },
      status: 'pending' as const,
      attempts: [],
      // The later item written first: written order, not time, says which is newer.
      created_at: at(second),
      next_attempt_at: at(second),
      finished_at: null,
    });
    const older = status('pending', 20);
    const newer = status('success', 10);
    for (const item of [older, newer]) {
      await raw('vcs_feedback').insert({
        ...item,
        payload: JSON.stringify(item.payload),
        attempts: JSON.stringify(item.attempts),
      });
    }

    await raw.migrate.latest(config);

    for (const table of ['notification_deliveries', 'vcs_feedback']) {
      expect(await selectRows(raw, `SELECT id FROM ${table}`)).toEqual([]);
    }
    const scope = ownerScope(owner.id);
    const deliveries = await store.uow.read(scope, (stores) =>
      stores.outbox.pageDeliveries(owner.id, notification.id, { limit: 10 }),
    );
    expect(deliveries).toEqual({ items: [delivered, pending], next: null });
    expect(await store.uow.read(scope, (stores) => stores.outbox.listVcsFeedback(owner.id, owner.jobId))).toEqual([
      older,
      newer,
    ]);
    expect(await store.uow.read(scope, (stores) => stores.outbox.hasNewerVcsFeedback(older))).toBe(true);
    expect(await store.uow.read(scope, (stores) => stores.outbox.hasNewerVcsFeedback(newer))).toBe(false);
    expect(await store.operationalStats.outboxBacklog()).toEqual({ notification: 1, vcs_feedback: 2 });

    const claimed = await store.uow.run(systemScope, (stores) => stores.outbox.claimDue(at(40), at(100), 10));
    expect(claimed).toEqual([
      { kind: 'vcs_feedback', item: { ...older, next_attempt_at: at(100) } },
      { kind: 'vcs_feedback', item: { ...newer, next_attempt_at: at(100) } },
      { kind: 'notification', item: { ...pending, next_attempt_at: at(100) } },
    ]);
    // A notification's rows still go with it.
    await store.uow.run(scope, (stores) => stores.notifications.delete(owner.id, notification.id));
    expect(await selectRows(raw, `SELECT id FROM outbox WHERE kind = 'notification'`)).toEqual([]);
  });
}
