/**
 * Issue 12: on Postgres, `api_tokens` rows are bound by row-level security like every owned
 * table: as the application role (while the connection logs in as a superuser), a person sees
 * their personal tokens and, in a member scope, those of the organizations they have joined;
 * nobody else's, and writes of other owners' rows are refused.
 */
import { createHash, randomUUID } from 'node:crypto';
import { type ApiToken, ownerScope, systemScope } from '@trellis/core';
import { checkTestPostgres, describeWithPostgres } from '@trellis/testkit';
import type { Knex } from 'knex';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rawConnection, selectRows } from './support/rawSql.js';
import { useMigratedDatabases } from './support/sqlStores.js';

const postgres = await checkTestPostgres();

function token(userId: string, orgId: string | null = null): ApiToken {
  const id = randomUUID();
  return {
    id,
    owner_id: orgId ?? userId,
    created_by: userId,
    org_id: orgId,
    name: 'ci',
    role: orgId === null ? null : 'viewer',
    token_hash: createHash('sha256').update(id).digest('hex'),
    created_at: new Date().toISOString(),
    expires_at: null,
    last_used_at: null,
    revoked_at: null,
  };
}

describeWithPostgres('row-level security of api_tokens on Postgres', postgres, () => {
  const databases = useMigratedDatabases('postgres');
  let raw: Knex;
  let closeStore: () => Promise<void>;
  const alice = randomUUID();
  const bob = randomUUID();
  const org = randomUUID();
  let alicePersonal: ApiToken;
  let bobPersonal: ApiToken;
  let orgToken: ApiToken;

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
    alicePersonal = await store.uow.run(ownerScope(alice), (stores) => stores.apiTokens.create(token(alice)));
    bobPersonal = await store.uow.run(ownerScope(bob), (stores) => stores.apiTokens.create(token(bob)));
    orgToken = await store.uow.run(ownerScope(org, alice), (stores) => stores.apiTokens.create(token(alice, org)));
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
  const visibleIds = async (trx: Knex.Transaction) =>
    new Set((await selectRows<{ id: string }>(trx, 'SELECT id FROM api_tokens')).map((row) => row.id));

  it('the superuser sees every token; the application role only what its scope may', async () => {
    expect((await selectRows(raw, 'SELECT id FROM api_tokens')).length).toBe(3);
    // A person's own work: their personal tokens only.
    await asApp({ owner: alice, actor: alice }, async (trx) => {
      expect(await visibleIds(trx)).toEqual(new Set([alicePersonal.id]));
    });
    // A member scope: the person's and their organizations'.
    await asApp({ actor: alice }, async (trx) => {
      expect(await visibleIds(trx)).toEqual(new Set([alicePersonal.id, orgToken.id]));
    });
    await asApp({ actor: bob }, async (trx) => {
      expect(await visibleIds(trx)).toEqual(new Set([bobPersonal.id]));
    });
    // Acting for the organization: a member may, a non-member sees nothing.
    await asApp({ owner: org, actor: alice }, async (trx) => {
      expect(await visibleIds(trx)).toEqual(new Set([orgToken.id]));
    });
    await asApp({ owner: org, actor: bob }, async (trx) => {
      expect(await visibleIds(trx)).toEqual(new Set());
    });
    await asApp({}, async (trx) => {
      expect(await visibleIds(trx)).toEqual(new Set());
    });
  });

  it("refuses writing another owner's token, and revoking one by an unfiltered UPDATE touches only visible rows", async () => {
    await asApp({ owner: bob, actor: bob }, async (trx) => {
      await expect(
        trx.raw(
          `INSERT INTO api_tokens (id, owner_id, created_by, name, token_hash, created_at)
           VALUES (?, ?, ?, 'x', ?, now())`,
          [randomUUID(), org, bob, 'f'.repeat(64)],
        ),
      ).rejects.toThrow(/row-level security/);
    });
    await asApp({ owner: bob, actor: bob }, async (trx) => {
      const updated = await trx.raw('UPDATE api_tokens SET revoked_at = now() RETURNING id');
      expect(updated.rows.map((row: { id: string }) => row.id)).toEqual([bobPersonal.id]);
    });
  });
});
