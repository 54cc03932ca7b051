/**
 * Issue 14: on Postgres, `notifications` and their deliveries (`outbox` rows, m044) are bound by row-level
 * security like every owned table: as the application role a person sees their own and, in a
 * member scope, their organizations'; nobody else's; writes of other owners' rows are refused.
 */
import { randomUUID } from 'node:crypto';
import { type Notification, ownerScope, systemScope } from '@trellis/core';
import { checkTestPostgres, describeWithPostgres, newNotification, newNotificationDelivery } from '@trellis/testkit';
import type { Knex } from 'knex';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rawConnection, selectRows } from './support/rawSql.js';
import { useMigratedDatabases } from './support/sqlStores.js';

const postgres = await checkTestPostgres();

describeWithPostgres('row-level security of notifications on Postgres', postgres, () => {
  const databases = useMigratedDatabases('postgres');
  let raw: Knex;
  let closeStore: () => Promise<void>;
  const alice = randomUUID();
  const bob = randomUUID();
  const org = randomUUID();
  let mine: Notification;
  let theirs: Notification;
  let ours: Notification;

  beforeAll(async () => {
    const { store, url, close } = await databases.openStore();
    closeStore = close;
    const now = new Date().toISOString();
    await store.uow.run(systemScope, async (stores) => {
      for (const id of [alice, bob]) {
        await stores.users.create({ id, email: `${id}@example.test`, name: 'person', created_at: now });
      }
      await stores.orgs.create({ id: org, name: `org-${org}`, created_at: now });
      await stores.orgs.addMember({
        id: randomUUID(),
        org_id: org,
        user_id: alice,
        email: `${alice}@example.test`,
        role: 'admin',
        created_at: now,
        joined_at: now,
        invited_by: null,
      });
    });
    const withDelivery = (ownerId: string, notification: Notification, actor?: string) =>
      store.uow.run(ownerScope(ownerId, actor), async (stores) => {
        const created = await stores.notifications.create(notification);
        await stores.outbox.add('notification', newNotificationDelivery(created));
        return created;
      });
    mine = await withDelivery(alice, newNotification(alice));
    theirs = await withDelivery(bob, newNotification(bob));
    ours = await withDelivery(org, newNotification(org, { created_by: alice, org_id: org }), alice);
    raw = rawConnection(url);
  });
  afterAll(async () => {
    await raw?.destroy();
    await closeStore?.();
  });

  /** Runs `check` as trellis_app with the settings a unit of work sets, then rolls back. */
  async function asApp(
    settings: { owner?: string; actor?: string },
    check: (trx: Knex.Transaction) => Promise<void>,
  ): Promise<void> {
    const rollback = new Error('rolled back on purpose');
    await expect(
      raw.transaction(async (trx) => {
        await trx.raw('SET LOCAL ROLE trellis_app');
        if (settings.owner) await trx.raw("SELECT set_config('trellis.user_id', ?, true)", [settings.owner]);
        if (settings.actor) await trx.raw("SELECT set_config('trellis.actor_id', ?, true)", [settings.actor]);
        await check(trx);
        throw rollback;
      }),
    ).rejects.toBe(rollback);
  }
  const visible = async (trx: Knex.Transaction, table: string, column: string) =>
    new Set((await selectRows<{ id: string }>(trx, `SELECT ${column} AS id FROM ${table}`)).map((row) => row.id));

  it('lets the application role see only the notifications and deliveries its scope may', async () => {
    for (const [table, column] of [
      ['notifications', 'id'],
      ["outbox WHERE kind = 'notification'", 'notification_id'],
    ] as const) {
      expect((await selectRows(raw, `SELECT * FROM ${table}`)).length).toBe(3);
      await asApp({ owner: alice, actor: alice }, async (trx) => {
        expect(await visible(trx, table, column)).toEqual(new Set([mine.id]));
      });
      await asApp({ actor: alice }, async (trx) => {
        expect(await visible(trx, table, column)).toEqual(new Set([mine.id, ours.id]));
      });
      await asApp({ owner: org, actor: bob }, async (trx) => {
        expect(await visible(trx, table, column)).toEqual(new Set());
      });
      await asApp({ actor: bob }, async (trx) => {
        expect(await visible(trx, table, column)).toEqual(new Set([theirs.id]));
      });
    }
  });

  it("refuses writing another owner's notification", async () => {
    await asApp({ owner: bob, actor: bob }, async (trx) => {
      await expect(
        trx.raw(
          `INSERT INTO notifications (id, owner_id, created_by, name, kind, url, events, created_at)
           VALUES (?, ?, ?, 'x', 'webhook', 'https://example.com', '[]', now())`,
          [randomUUID(), org, bob],
        ),
      ).rejects.toThrow(/row-level security/);
    });
    await asApp({ owner: bob, actor: bob }, async (trx) => {
      const deleted = await trx.raw('DELETE FROM notifications RETURNING id');
      expect(deleted.rows.map((row: { id: string }) => row.id)).toEqual([theirs.id]);
    });
  });
});
