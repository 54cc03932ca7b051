/**
 * DESIGN §5: on Postgres, owner-scoped work runs as `trellis_app` with `trellis.user_id` set, and
 * row-level security keeps every other owner's rows out of reach even for SQL without any owner
 * filter, although the connection itself logs in as `postgres`, a superuser.
 */
import { randomUUID } from 'node:crypto';
import { ownerScope, systemScope } from '@trellis/core';
import { checkTestPostgres, describeWithPostgres } from '@trellis/testkit';
import type { Knex } from 'knex';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rawConnection, selectRows } from './support/rawSql.js';
import { type Seeded, seedEverything } from './support/seedEverything.js';
import { useMigratedDatabases } from './support/sqlStores.js';

/** Every owned table and the column that names its owner. */
const OWNED: ReadonlyArray<readonly [table: string, ownerColumn: string]> = [
  ['users', 'id'],
  ['identities', 'user_id'],
  ['cli_logins', 'profile_id'],
  ['refresh_tokens', 'user_id'],
  ['vineyards', 'owner_id'],
  ['cloud_identities', 'owner_id'],
  ['vines', 'owner_id'],
  ['vine_components', 'owner_id'],
  ['workers', 'owner_id'],
  ['jobs', 'owner_id'],
  ['config_snapshots', 'owner_id'],
  ['log_chunks', 'owner_id'],
  ['plan_artifacts', 'owner_id'],
  ['state_versions', 'owner_id'],
  ['state_locks', 'owner_id'],
];

/** Children first, so deleting in this order never trips a foreign key of the same owner. */
const DELETE_ORDER = [
  'state_versions',
  'state_locks',
  'log_chunks',
  'plan_artifacts',
  'vine_components',
  'jobs',
  'config_snapshots',
  'workers',
  'vines',
  'cloud_identities',
  'vineyards',
  'refresh_tokens',
  'cli_logins',
  'identities',
  'users',
];

const postgres = await checkTestPostgres();

describeWithPostgres('row-level security on Postgres', postgres, () => {
  const databases = useMigratedDatabases('postgres');
  let raw: Knex;
  let a: Seeded;
  let b: Seeded;
  let closeStore: () => Promise<void>;

  beforeAll(async () => {
    const { store, url, close } = await databases.openStore();
    closeStore = close;
    a = await seedEverything(store.uow);
    b = await seedEverything(store.uow);
    raw = rawConnection(url);
  });
  afterAll(async () => {
    await raw?.destroy();
    await closeStore?.();
  });

  it('the test connection is a superuser, and without the role switch it sees both owners', async () => {
    const [me] = await selectRows<{ rolsuper: boolean }>(
      raw,
      'SELECT rolsuper FROM pg_roles WHERE rolname = session_user',
    );
    expect(me?.rolsuper).toBe(true);
    for (const [table, column] of OWNED) {
      const owners = await ownersIn(raw, table, column);
      expect(owners, table).toEqual(new Set([a.id, b.id]));
    }
  });

  it('trellis_app is neither a superuser nor BYPASSRLS nor the owner of any table', async () => {
    const [role] = await selectRows<{ rolsuper: boolean; rolbypassrls: boolean; rolcanlogin: boolean }>(
      raw,
      "SELECT rolsuper, rolbypassrls, rolcanlogin FROM pg_roles WHERE rolname = 'trellis_app'",
    );
    expect(role).toEqual({ rolsuper: false, rolbypassrls: false, rolcanlogin: false });
    const owned = await selectRows(raw, "SELECT tablename FROM pg_tables WHERE tableowner = 'trellis_app'");
    expect(owned).toEqual([]);
  });

  it("SELECT without a filter returns only the owner's rows, in every owned table", async () => {
    await asOwner(raw, a.id, async (trx) => {
      for (const [table, column] of OWNED) {
        expect(await ownersIn(trx, table, column), table).toEqual(new Set([a.id]));
      }
    });
  });

  it('with no owner set, an owner-scoped transaction sees nothing at all', async () => {
    await asOwner(raw, null, async (trx) => {
      for (const [table] of OWNED) {
        expect(await selectRows(trx, `SELECT 1 FROM ${table}`), table).toEqual([]);
      }
    });
  });

  it("UPDATE and DELETE without a filter touch none of another owner's rows", async () => {
    await asOwner(raw, a.id, async (trx) => {
      for (const [table, column] of OWNED) {
        const updated = await trx.raw(`UPDATE ${table} SET ${column} = ${column} RETURNING ${column} AS owner`);
        expect(new Set(updated.rows.map((row: { owner: string }) => row.owner)), table).toEqual(new Set([a.id]));
      }
      for (const table of DELETE_ORDER) await trx.raw(`DELETE FROM ${table}`);
      // Back to the superuser inside the same transaction: B's rows are all still there.
      await trx.raw('RESET ROLE');
      for (const [table, column] of OWNED) {
        expect(await ownersIn(trx, table, column), table).toEqual(new Set([b.id]));
      }
    });
    for (const [table, column] of OWNED) {
      expect(await ownersIn(raw, table, column), `${table} after rollback`).toEqual(new Set([a.id, b.id]));
    }
  });

  it("INSERT of a row with another owner's id is refused, in every owned table", async () => {
    const inserts: Record<string, [string, unknown[]]> = {
      users: ['INSERT INTO users (id, email, name, created_at) VALUES (?, ?, ?, now())', [b.id, 'x@example.test', 'x']],
      identities: [
        "INSERT INTO identities (user_id, provider, provider_user_id, scopes) VALUES (?, 'github', 'x', '')",
        [b.id],
      ],
      cli_logins: [
        "INSERT INTO cli_logins (device_code, verification_code, profile_id, created_at, expires_at) VALUES (?, 'BCDFGH', ?, now(), now())",
        [randomUUID(), b.id],
      ],
      refresh_tokens: [
        'INSERT INTO refresh_tokens (id, user_id, family_id, expires_at) VALUES (?, ?, ?, now())',
        [randomUUID(), b.id, randomUUID()],
      ],
      vineyards: [
        "INSERT INTO vineyards (id, owner_id, name, created_at) VALUES (?, ?, 'x', now())",
        [randomUUID(), b.id],
      ],
      cloud_identities: [
        "INSERT INTO cloud_identities (id, owner_id, provider, role_arn, external_id) VALUES (?, ?, 'aws', 'arn', 'x')",
        [randomUUID(), b.id],
      ],
      vines: [
        `INSERT INTO vines (id, owner_id, vineyard_id, name, project_name, source, variables, engine, status, created_at, updated_at)
         VALUES (?, ?, ?, 'x', 'x', '{}', '{}', '{}', 'NEW', now(), now())`,
        [randomUUID(), b.id, b.vineyardId],
      ],
      vine_components: [
        "INSERT INTO vine_components (vine_id, owner_id, kind, data, job_id, updated_at) VALUES (?, ?, 'argocd', '{}', ?, now())",
        [a.vineId, b.id, a.jobId],
      ],
      workers: [
        "INSERT INTO workers (id, owner_id, name, mode, token_hash, metadata, created_at) VALUES (?, ?, 'x', 'cloud', 'x', '{}', now())",
        [randomUUID(), b.id],
      ],
      jobs: [
        `INSERT INTO jobs (id, owner_id, job_type, status, config_snapshot, config_hash, execution_metadata, created_at)
         VALUES (?, ?, 'PLAN', 'QUEUED', '{}', 'x', '{}', now())`,
        [randomUUID(), b.id],
      ],
      config_snapshots: [
        "INSERT INTO config_snapshots (owner_id, config_hash, snapshot) VALUES (?, 'x', '{}')",
        [b.id],
      ],
      log_chunks: [
        "INSERT INTO log_chunks (job_id, owner_id, log_chunk, stream_type, created_at) VALUES (?, ?, 'x', 'STDOUT', now())",
        [a.jobId, b.id],
      ],
      plan_artifacts: [
        "INSERT INTO plan_artifacts (job_id, owner_id, storage_key, size, sha256, created_at) VALUES (?, ?, 'k', 1, 'x', now())",
        [randomUUID(), b.id],
      ],
      state_versions: [
        "INSERT INTO state_versions (owner_id, vine_id, serial, lineage, size, sha256, storage_key, created_at) VALUES (?, ?, 1, 'l', 1, 'x', 'k', now())",
        [b.id, b.vineId],
      ],
      state_locks: [
        "INSERT INTO state_locks (vine_id, owner_id, lock_id, info, created_at) VALUES (?, ?, 'x', '{}', now())",
        [randomUUID(), b.id],
      ],
    };
    expect(Object.keys(inserts).sort()).toEqual(OWNED.map(([table]) => table).sort());
    for (const [table, [sql, bindings]] of Object.entries(inserts)) {
      await asOwner(raw, a.id, async (trx) => {
        await expect(trx.raw(sql, bindings as Knex.RawBinding[]), table).rejects.toThrow(/row-level security/);
      });
    }
  });

  it("UPDATE cannot hand one of the owner's rows to another owner", async () => {
    await asOwner(raw, a.id, async (trx) => {
      await expect(trx.raw('UPDATE vineyards SET owner_id = ?', [b.id])).rejects.toThrow(/row-level security/);
    });
  });

  it('releases, which belong to nobody, are readable but not writable by trellis_app', async () => {
    await asOwner(raw, a.id, async (trx) => {
      expect(await selectRows(trx, 'SELECT version FROM worker_releases')).toEqual([{ version: '1.0.0' }]);
      await expect(
        trx.raw("INSERT INTO worker_releases (version, release_notes, published_at) VALUES ('6.6.6', '', now())"),
      ).rejects.toThrow(/permission denied/);
    });
  });

  it("the store's owner-scoped units of work are the ones the policies bind: trellis_app, with the owner set", async () => {
    const { store, url, close } = await databases.openStore();
    const spy = rawConnection(url);
    try {
      // A test-only trigger that notes who inserted each vineyard, as seen inside the transaction.
      await spy.raw('CREATE TABLE seen_by (vineyard_id uuid, role text, owner_setting text)');
      await spy.raw('GRANT INSERT ON seen_by TO trellis_app');
      await spy.raw(`
        CREATE FUNCTION note_inserter() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO seen_by VALUES (NEW.id, current_user, current_setting('trellis.user_id', true));
          RETURN NULL;
        END $$`);
      await spy.raw(
        'CREATE TRIGGER vineyards_note_inserter AFTER INSERT ON vineyards FOR EACH ROW EXECUTE FUNCTION note_inserter()',
      );

      const owner = randomUUID();
      const now = new Date().toISOString();
      await store.uow.run(systemScope, (stores) =>
        stores.users.create({ id: owner, email: `${owner}@example.test`, name: 'o', created_at: now }),
      );
      const mine = await store.uow.run(ownerScope(owner), (stores) =>
        stores.vineyards.create({ id: randomUUID(), owner_id: owner, name: 'owner-scoped', created_at: now }),
      );
      const system = await store.uow.run(systemScope, (stores) =>
        stores.vineyards.create({ id: randomUUID(), owner_id: owner, name: 'system', created_at: now }),
      );
      const [login] = await selectRows<{ role: string }>(spy, 'SELECT session_user AS role');
      const seen = await selectRows<{ vineyard_id: string; role: string; owner_setting: string | null }>(
        spy,
        'SELECT vineyard_id, role, owner_setting FROM seen_by',
      );
      expect(seen).toEqual(
        expect.arrayContaining([
          { vineyard_id: mine.id, role: 'trellis_app', owner_setting: owner },
          { vineyard_id: system.id, role: login?.role, owner_setting: expect.not.stringContaining(owner) },
        ]),
      );
      expect(seen).toHaveLength(2);
      expect(login?.role).not.toBe('trellis_app');
    } finally {
      await spy.destroy();
      await close();
    }
  });
});

/**
 * Runs `check` in a transaction that is what an owner-scoped unit of work is (role switch and
 * owner setting, exactly as the store sets them), then rolls it back whatever happened.
 */
async function asOwner(
  raw: Knex,
  ownerId: string | null,
  check: (trx: Knex.Transaction) => Promise<void>,
): Promise<void> {
  const rollback = new Error('rolled back on purpose');
  await expect(
    raw.transaction(async (trx) => {
      await trx.raw('SET LOCAL ROLE trellis_app');
      if (ownerId !== null) await trx.raw("SELECT set_config('trellis.user_id', ?, true)", [ownerId]);
      await check(trx);
      throw rollback;
    }),
  ).rejects.toBe(rollback);
}

async function ownersIn(knex: Knex, table: string, column: string): Promise<Set<string>> {
  const rows = await selectRows<{ owner: string }>(knex, `SELECT ${column} AS owner FROM ${table}`);
  return new Set(rows.map((row) => row.owner));
}
