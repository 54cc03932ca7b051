/**
 * Issue 14: on Postgres the audit log is append-only to the application. As the application role
 * (while the connection logs in as a superuser), an owner's work may insert and read its own
 * entries, but any UPDATE or DELETE of the table is refused for want of the privilege, even of
 * rows it can see; the superuser (the retention prune's system work) still may delete.
 */
import { randomUUID } from 'node:crypto';
import { ownerScope, systemScope } from '@trellis/core';
import { checkTestPostgres, describeWithPostgres } from '@trellis/testkit';
import type { Knex } from 'knex';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rawConnection, selectRows } from './support/rawSql.js';
import { useMigratedDatabases } from './support/sqlStores.js';

const postgres = await checkTestPostgres();

describeWithPostgres('privileges of audit_entries on Postgres', postgres, () => {
  const databases = useMigratedDatabases('postgres');
  let raw: Knex;
  let closeStore: () => Promise<void>;
  const alice = randomUUID();
  const bob = randomUUID();
  const entryId = randomUUID();

  beforeAll(async () => {
    const { store, url, close } = await databases.openStore();
    closeStore = close;
    const now = new Date().toISOString();
    await store.uow.run(systemScope, async (stores) => {
      for (const id of [alice, bob]) {
        await stores.users.create({ id, email: `${id}@example.test`, name: 'person', created_at: now });
      }
    });
    await store.uow.run(ownerScope(alice), (stores) =>
      stores.audit.append({
        id: entryId,
        at: now,
        actor: { type: 'user', id: alice, email: `${alice}@example.test` },
        action: 'vineyard.create',
        target: { type: 'vineyard', id: randomUUID() },
        owner_id: alice,
        request_id: 'req-1',
        ip: '127.0.0.1',
        details: { name: 'prod' },
      }),
    );
    raw = rawConnection(url);
  });
  afterAll(async () => {
    await raw?.destroy();
    await closeStore?.();
  });

  /** Runs `check` as trellis_app with the settings of alice's own unit of work, then rolls back. */
  async function asApp(owner: string, check: (trx: Knex.Transaction) => Promise<void>): Promise<void> {
    const rollback = new Error('rolled back on purpose');
    await expect(
      raw.transaction(async (trx) => {
        await trx.raw('SET LOCAL ROLE trellis_app');
        await trx.raw("SELECT set_config('trellis.user_id', ?, true), set_config('trellis.actor_id', ?, true)", [
          owner,
          owner,
        ]);
        await check(trx);
        throw rollback;
      }),
    ).rejects.toBe(rollback);
  }

  it('the application role reads its own entries and inserts, but may neither UPDATE nor DELETE', async () => {
    await asApp(alice, async (trx) => {
      expect((await selectRows<{ id: string }>(trx, 'SELECT id FROM audit_entries')).map((row) => row.id)).toEqual([
        entryId,
      ]);
    });
    await asApp(bob, async (trx) => {
      expect(await selectRows(trx, 'SELECT id FROM audit_entries')).toEqual([]);
    });
    await asApp(alice, async (trx) => {
      await expect(trx.raw("UPDATE audit_entries SET action = 'job.create' WHERE id = ?", [entryId])).rejects.toThrow(
        /permission denied for table audit_entries/,
      );
    });
    await asApp(alice, async (trx) => {
      await expect(trx.raw('DELETE FROM audit_entries WHERE id = ?', [entryId])).rejects.toThrow(
        /permission denied for table audit_entries/,
      );
    });
    await asApp(alice, async (trx) => {
      await trx.raw(
        `INSERT INTO audit_entries (id, owner_id, at, actor_type, actor_id, action, target_type, target_id, details)
         VALUES (?, ?, now(), 'user', ?, 'vineyard.create', 'vineyard', ?, '{}')`,
        [randomUUID(), alice, alice, randomUUID()],
      );
      // Another owner's entry is refused by row-level security.
      await expect(
        trx.raw(
          `INSERT INTO audit_entries (id, owner_id, at, actor_type, action, target_type, target_id, details)
           VALUES (?, ?, now(), 'system', 'vineyard.create', 'vineyard', ?, '{}')`,
          [randomUUID(), bob, randomUUID()],
        ),
      ).rejects.toThrow(/row-level security/);
    });
    // The entry is untouched.
    const [row] = await selectRows<{ action: string }>(raw, 'SELECT action FROM audit_entries WHERE id = ?', [entryId]);
    expect(row?.action).toBe('vineyard.create');
  });
});
