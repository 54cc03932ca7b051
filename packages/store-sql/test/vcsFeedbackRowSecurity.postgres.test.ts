/**
 * Issue 13: on Postgres, git feedback (`outbox` rows of kind `vcs_feedback`, m044) and `vcs_comments` are bound by row-level security like
 * every owned table: as the application role an owner sees only its own items and comment ids,
 * and writes of another owner's rows are refused.
 */
import { randomUUID } from 'node:crypto';
import { ownerScope, systemScope, type VcsFeedbackItem } from '@trellis/core';
import {
  checkTestPostgres,
  describeWithPostgres,
  newJob,
  newUser,
  newVcsFeedbackItem,
  newVine,
  newVineyard,
} from '@trellis/testkit';
import type { Knex } from 'knex';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rawConnection, selectRows } from './support/rawSql.js';
import { useMigratedDatabases } from './support/sqlStores.js';

const postgres = await checkTestPostgres();

describeWithPostgres('row-level security of git feedback on Postgres', postgres, () => {
  const databases = useMigratedDatabases('postgres');
  let raw: Knex;
  let closeStore: () => Promise<void>;
  const items = new Map<string, VcsFeedbackItem>();
  const vines = new Map<string, string>();
  let alice = '';
  let bob = '';

  beforeAll(async () => {
    const { store, url, close } = await databases.openStore();
    closeStore = close;
    for (const name of ['alice', 'bob']) {
      const { user, vine, job } = await store.uow.run(systemScope, async (stores) => {
        const user = await stores.users.create(newUser());
        const vineyard = await stores.vineyards.create(newVineyard(user.id));
        const vine = await stores.vines.create(newVine(user.id, vineyard.id));
        return { user, vine, job: await stores.jobs.create(newJob(user.id, vine)) };
      });
      const item = newVcsFeedbackItem(job);
      await store.uow.run(ownerScope(user.id), async (stores) => {
        await stores.outbox.add('vcs_feedback', item);
        await stores.vcsFeedback.putComment({
          owner_id: user.id,
          vine_id: vine.id,
          provider: 'github',
          repository: 'acme/infra',
          number: 7,
          comment_id: `${name}-comment`,
          updated_at: new Date().toISOString(),
        });
      });
      items.set(name, item);
      vines.set(name, vine.id);
      if (name === 'alice') alice = user.id;
      else bob = user.id;
    }
    raw = rawConnection(url);
  });
  afterAll(async () => {
    await raw?.destroy();
    await closeStore?.();
  });

  async function asApp(owner: string, check: (trx: Knex.Transaction) => Promise<void>): Promise<void> {
    const rollback = new Error('rolled back on purpose');
    await expect(
      raw.transaction(async (trx) => {
        await trx.raw('SET LOCAL ROLE trellis_app');
        await trx.raw("SELECT set_config('trellis.user_id', ?, true)", [owner]);
        await trx.raw("SELECT set_config('trellis.actor_id', ?, true)", [owner]);
        await check(trx);
        throw rollback;
      }),
    ).rejects.toBe(rollback);
  }

  it('shows an owner only its own items and comment ids', async () => {
    expect((await selectRows(raw, "SELECT * FROM outbox WHERE kind = 'vcs_feedback'")).length).toBe(2);
    await asApp(alice, async (trx) => {
      const rows = await selectRows<{ id: string }>(trx, "SELECT id FROM outbox WHERE kind = 'vcs_feedback'");
      expect(rows.map((row) => row.id)).toEqual([items.get('alice')?.id]);
      const comments = await selectRows<{ comment_id: string }>(trx, 'SELECT comment_id FROM vcs_comments');
      expect(comments.map((row) => row.comment_id)).toEqual(['alice-comment']);
    });
  });

  it("refuses writing another owner's item or comment id", async () => {
    const theirs = items.get('alice') as VcsFeedbackItem;
    await asApp(bob, async (trx) => {
      await expect(
        trx.raw(
          `INSERT INTO outbox (id, owner_id, kind, job_id, vine_id, provider, subject, payload, status, attempts, created_at, next_attempt_at)
           VALUES (?, ?, 'vcs_feedback', ?, ?, 'github', 's', '{}', 'pending', '[]', now(), now())`,
          [randomUUID(), alice, theirs.job_id, theirs.vine_id],
        ),
      ).rejects.toThrow(/row-level security/);
    });
    await asApp(bob, async (trx) => {
      await expect(
        trx.raw(
          `INSERT INTO vcs_comments (vine_id, owner_id, provider, repository_key, repository, number, comment_id, updated_at)
           VALUES (?, ?, 'github', 'acme/infra', 'acme/infra', 8, 'x', now())`,
          [vines.get('alice'), alice],
        ),
      ).rejects.toThrow(/row-level security/);
    });
    await asApp(bob, async (trx) => {
      const updated = await trx.raw("UPDATE outbox SET status = 'failed' RETURNING id");
      expect(updated.rows.map((row: { id: string }) => row.id)).toEqual([items.get('bob')?.id]);
    });
  });
});
