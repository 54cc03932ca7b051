/**
 * Issue 16: the OIDC issuer's signing keys are system records. On Postgres the application role
 * has no privilege on `signing_keys` at all: owner work can neither read a (sealed) private key
 * nor write one; system work, as the connecting role, can.
 */
import { randomUUID } from 'node:crypto';
import { systemScope } from '@trellis/core';
import { checkTestPostgres, describeWithPostgres } from '@trellis/testkit';
import type { Knex } from 'knex';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rawConnection, selectRows } from './support/rawSql.js';
import { useMigratedDatabases } from './support/sqlStores.js';

const postgres = await checkTestPostgres();

describeWithPostgres('privileges of signing_keys on Postgres', postgres, () => {
  const databases = useMigratedDatabases('postgres');
  let raw: Knex;
  let closeStore: () => Promise<void>;
  const alice = randomUUID();
  const kid = randomUUID();

  beforeAll(async () => {
    const { store, url, close } = await databases.openStore();
    closeStore = close;
    const now = new Date().toISOString();
    await store.uow.run(systemScope, async (stores) => {
      await stores.users.create({ id: alice, email: `${alice}@example.test`, name: 'person', created_at: now });
      await stores.signingKeys.create({
        id: kid,
        algorithm: 'RS256',
        public_jwk: { kty: 'RSA', n: 'n', e: 'AQAB' },
        private_key_sealed: 'v1.sealed',
        created_at: now,
        retired_at: null,
        published_until: null,
      });
    });
    raw = rawConnection(url);
  });
  afterAll(async () => {
    await raw?.destroy();
    await closeStore?.();
  });

  async function asApp(check: (trx: Knex.Transaction) => Promise<void>): Promise<void> {
    const rollback = new Error('rolled back on purpose');
    await expect(
      raw.transaction(async (trx) => {
        await trx.raw('SET LOCAL ROLE trellis_app');
        await trx.raw("SELECT set_config('trellis.user_id', ?, true), set_config('trellis.actor_id', ?, true)", [
          alice,
          alice,
        ]);
        await check(trx);
        throw rollback;
      }),
    ).rejects.toBe(rollback);
  }

  it('the application role may neither read nor write signing keys; system work may', async () => {
    await asApp(async (trx) => {
      await expect(trx.raw('SELECT private_key_sealed FROM signing_keys')).rejects.toThrow(
        /permission denied for table signing_keys/,
      );
    });
    await asApp(async (trx) => {
      await expect(
        trx.raw(
          `INSERT INTO signing_keys (id, algorithm, public_jwk, private_key_sealed, created_at)
           VALUES ('x', 'RS256', '{}', 'forged', now())`,
        ),
      ).rejects.toThrow(/permission denied for table signing_keys/);
    });
    const rows = await selectRows<{ id: string }>(raw, 'SELECT id FROM signing_keys');
    expect(rows.map((row) => row.id)).toEqual([kid]);
  });
});
