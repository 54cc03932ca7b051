/**
 * The git feedback outbox's claim on Postgres: an item another transaction has claimed but not
 * committed is skipped, not waited for (`FOR UPDATE SKIP LOCKED`), so replicas never send a
 * commit status or a comment twice.
 */
import { ownerScope, systemScope } from '@trellis/core';
import {
  checkTestPostgres,
  describeWithPostgres,
  newJob,
  newUser,
  newVcsFeedbackItem,
  newVine,
  newVineyard,
} from '@trellis/testkit';
import { expect, it } from 'vitest';
import { useMigratedDatabases } from './support/sqlStores.js';

const postgres = await checkTestPostgres();

describeWithPostgres('git feedback claims on Postgres', postgres, () => {
  const databases = useMigratedDatabases('postgres');

  it('skips items another open transaction holds, and each is claimed once', async () => {
    const { store, close } = await databases.openStore();
    try {
      const uow = store.uow;
      const { user, job } = await uow.run(systemScope, async (stores) => {
        const user = await stores.users.create(newUser());
        const vineyard = await stores.vineyards.create(newVineyard(user.id));
        const vine = await stores.vines.create(newVine(user.id, vineyard.id));
        return { user, job: await stores.jobs.create(newJob(user.id, vine)) };
      });
      const items = Array.from({ length: 6 }, (_, i) =>
        newVcsFeedbackItem(job, { next_attempt_at: new Date(Date.UTC(2026, 2, 4, 0, 0, i)).toISOString() }),
      );
      await uow.run(ownerScope(user.id), async (stores) => {
        for (const item of items) await stores.outbox.add('vcs_feedback', item);
      });
      const now = '2026-03-05T00:00:00.000Z';
      const lease = '2026-03-05T00:02:00.000Z';
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
      expect(new Set([...first, ...second])).toEqual(new Set(items.map((item) => item.id)));
      expect(await uow.run(systemScope, (stores) => stores.outbox.claimDue(now, lease, 10))).toEqual([]);
    } finally {
      await close();
    }
  }, 30_000);
});
