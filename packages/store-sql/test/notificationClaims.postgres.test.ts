/**
 * The outbox's claim on Postgres (notification deliveries): a delivery another transaction has claimed but not committed is
 * skipped, not waited for (`FOR UPDATE SKIP LOCKED`), so replicas neither send one twice nor
 * queue behind each other.
 */
import { ownerScope, systemScope } from '@trellis/core';
import { checkTestPostgres, describeWithPostgres, newNotification, newNotificationDelivery } from '@trellis/testkit';
import { expect, it } from 'vitest';
import { useMigratedDatabases } from './support/sqlStores.js';

const postgres = await checkTestPostgres();

describeWithPostgres('notification claims on Postgres', postgres, () => {
  const databases = useMigratedDatabases('postgres');

  it('skips deliveries another open transaction holds, and each is claimed once', async () => {
    const { store, close } = await databases.openStore();
    try {
      const uow = store.uow;
      const ownerId = crypto.randomUUID();
      const notification = newNotification(ownerId);
      const deliveries = Array.from({ length: 6 }, (_, i) =>
        newNotificationDelivery(notification, {
          next_attempt_at: new Date(Date.UTC(2026, 2, 4, 0, 0, i)).toISOString(),
        }),
      );
      await uow.run(ownerScope(ownerId), async (stores) => {
        await stores.notifications.create(notification);
        for (const delivery of deliveries) await stores.outbox.add('notification', delivery);
      });
      const now = '2026-03-05T00:00:00.000Z';
      const lease = '2026-03-05T00:02:00.000Z';
      // The first claim keeps its transaction open until the second claim has finished: with a
      // plain FOR UPDATE the second would wait for the first, and this would never end.
      let claimed!: () => void;
      const firstClaimed = new Promise<void>((resolve) => {
        claimed = resolve;
      });
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const firstRun = uow.run(systemScope, async (stores) => {
        const mine = await stores.outbox.claimDue(now, lease, 4);
        claimed();
        await gate;
        return mine.map((entry) => entry.item.id);
      });
      await firstClaimed;
      const second = (await uow.run(systemScope, (stores) => stores.outbox.claimDue(now, lease, 10))).map(
        (entry) => entry.item.id,
      );
      release();
      const first = await firstRun;
      expect(first).toHaveLength(4);
      expect(second).toHaveLength(2);
      expect(new Set([...first, ...second])).toEqual(new Set(deliveries.map((d) => d.id)));
      expect(await uow.run(systemScope, (stores) => stores.outbox.claimDue(now, lease, 10))).toEqual([]);
    } finally {
      await close();
    }
  }, 30_000);
});
