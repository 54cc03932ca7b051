/**
 * DESIGN §5: on Postgres, owner-scoped work runs as `trellis_app` with `trellis.user_id` set, and
 * row-level security keeps every other owner's rows out of reach even for SQL without any owner
 * filter, although the connection itself logs in as `postgres`, a superuser.
 */
import { randomUUID } from 'node:crypto';
import { memberScope, type OrgMember, ownerScope, systemScope, type UnitOfWork } from '@trellis/core';
import { checkTestPostgres, describeWithPostgres } from '@trellis/testkit';
import type { Knex } from 'knex';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rawConnection, selectRows } from './support/rawSql.js';
import { type Seeded, seedEverything, seedOwnedRecords } from './support/seedEverything.js';
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

  it('with the owner set but no actor, a transaction sees nothing at all (fail closed)', async () => {
    await asScope(raw, { owner: a.id, actor: null }, async (trx) => {
      for (const [table] of OWNED) {
        expect(await selectRows(trx, `SELECT 1 FROM ${table}`), table).toEqual([]);
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
 * Runs `check` in a transaction that is what an owner-scoped unit of work is (role switch, owner
 * and actor settings, exactly as the store sets them for an owner acting itself), then rolls it
 * back whatever happened.
 */
async function asOwner(
  raw: Knex,
  ownerId: string | null,
  check: (trx: Knex.Transaction) => Promise<void>,
): Promise<void> {
  await asScope(raw, { owner: ownerId, actor: ownerId }, check);
}

/**
 * Runs `check` as trellis_app with the owner and actor settings given (null: left unset; a member
 * scope is an empty owner and the person as actor), then rolls back whatever happened. `before`
 * runs first in the same transaction, still as the superuser.
 */
async function asScope(
  raw: Knex,
  settings: { owner: string | null; actor: string | null },
  check: (trx: Knex.Transaction) => Promise<void>,
  before?: (trx: Knex.Transaction) => Promise<void>,
): Promise<void> {
  const rollback = new Error('rolled back on purpose');
  await expect(
    raw.transaction(async (trx) => {
      await before?.(trx);
      await trx.raw('SET LOCAL ROLE trellis_app');
      if (settings.owner !== null) await trx.raw("SELECT set_config('trellis.user_id', ?, true)", [settings.owner]);
      if (settings.actor !== null) await trx.raw("SELECT set_config('trellis.actor_id', ?, true)", [settings.actor]);
      await check(trx);
      throw rollback;
    }),
  ).rejects.toBe(rollback);
}

async function ownersIn(knex: Knex, table: string, column: string): Promise<Set<string>> {
  const rows = await selectRows<{ owner: string }>(knex, `SELECT ${column} AS owner FROM ${table}`);
  return new Set(rows.map((row) => row.owner));
}

/** The tables an organization owns rows in (by owner_id), plus its own two. */
const ORG_OWNED: ReadonlyArray<readonly [table: string, ownerColumn: string]> = [
  ...OWNED.filter(([, column]) => column === 'owner_id'),
  ['orgs', 'id'],
  ['org_members', 'org_id'],
];
const ALL_OWNED = [...OWNED, ['orgs', 'id'] as const, ['org_members', 'org_id'] as const];

interface SeededOrg {
  id: string;
  vineyardId: string;
  members: OrgMember[];
}

/** An organization with a row in every table it can own rows in, and these members. */
async function seedOrg(
  uow: UnitOfWork,
  name: string,
  members: ReadonlyArray<{ user: string | null; email: string; role: OrgMember['role'] }>,
): Promise<SeededOrg> {
  const id = randomUUID();
  const now = new Date().toISOString();
  const added = await uow.run(ownerScope(id), async (stores) => {
    await stores.orgs.create({ id, name, created_at: now });
    const rows: OrgMember[] = [];
    for (const member of members) {
      rows.push(
        await stores.orgs.addMember({
          id: randomUUID(),
          org_id: id,
          user_id: member.user,
          email: member.email,
          role: member.role,
          created_at: now,
          joined_at: member.user === null ? null : now,
          invited_by: null,
        }),
      );
    }
    return rows;
  });
  const records = await seedOwnedRecords(uow, ownerScope(id), id);
  return { id, vineyardId: records.vineyardId, members: added };
}

describeWithPostgres('row-level security follows membership (m010)', postgres, () => {
  const databases = useMigratedDatabases('postgres');
  let raw: Knex;
  let closeStore: () => Promise<void>;
  /** alice: joined member of o1, invited (pending) to o2; bob: owner of all three; carol: member of o3. */
  let alice: Seeded;
  let bob: Seeded;
  let carol: Seeded;
  let o1: SeededOrg;
  let o2: SeededOrg;
  let o3: SeededOrg;
  const email = (user: Seeded) => `${user.id}@example.test`;

  beforeAll(async () => {
    const { store, url, close } = await databases.openStore();
    closeStore = close;
    alice = await seedEverything(store.uow);
    bob = await seedEverything(store.uow);
    carol = await seedEverything(store.uow);
    o1 = await seedOrg(store.uow, 'o1', [
      { user: bob.id, email: email(bob), role: 'owner' },
      { user: alice.id, email: email(alice), role: 'viewer' },
    ]);
    o2 = await seedOrg(store.uow, 'o2', [
      { user: bob.id, email: email(bob), role: 'owner' },
      { user: null, email: email(alice).toUpperCase(), role: 'admin' },
    ]);
    o3 = await seedOrg(store.uow, 'o3', [
      { user: bob.id, email: email(bob), role: 'owner' },
      { user: carol.id, email: email(carol), role: 'admin' },
      { user: null, email: 'someone@example.test', role: 'viewer' },
    ]);
    raw = rawConnection(url);
  });
  afterAll(async () => {
    await raw?.destroy();
    await closeStore?.();
  });

  it('every owned table, the new ones included, has row-level security and one policy on trellis_visible_owners()', async () => {
    const tables = await selectRows<{ relname: string; relrowsecurity: boolean }>(
      raw,
      `SELECT relname, relrowsecurity FROM pg_class WHERE relname = ANY (?) AND relkind = 'r'`,
      [ALL_OWNED.map(([table]) => table)],
    );
    expect(tables).toHaveLength(ALL_OWNED.length);
    for (const table of tables) expect(table.relrowsecurity, table.relname).toBe(true);
    const policies = await selectRows<{ tablename: string; policyname: string; qual: string; with_check: string }>(
      raw,
      `SELECT tablename, policyname, qual, with_check FROM pg_policies WHERE tablename = ANY (?)`,
      [ALL_OWNED.map(([table]) => table)],
    );
    for (const [table, column] of ALL_OWNED) {
      const mine = policies.filter((policy) => policy.tablename === table);
      const main = mine.find((policy) => policy.policyname === `${table}_visible_owners`);
      expect(main?.qual, table).toContain(`${column} = ANY (`);
      expect(main?.qual, table).toContain('trellis_visible_owners()');
      expect(main?.with_check, table).toContain('trellis_visible_owners()');
      // The m002..m006 policies are gone.
      expect(mine.map((policy) => policy.policyname).sort(), table).toEqual(
        table === 'org_members'
          ? ['org_members_self_join', 'org_members_self_read', 'org_members_visible_owners']
          : [`${table}_visible_owners`],
      );
    }
    const grants = await selectRows<{ table_name: string; privilege_type: string }>(
      raw,
      `SELECT table_name, privilege_type FROM information_schema.role_table_grants
       WHERE grantee = 'trellis_app' AND table_name IN ('orgs', 'org_members')`,
    );
    expect(grants.map((grant) => `${grant.table_name}:${grant.privilege_type}`).sort()).toEqual(
      ['orgs', 'org_members']
        .flatMap((table) => ['DELETE', 'INSERT', 'SELECT', 'UPDATE'].map((p) => `${table}:${p}`))
        .sort(),
    );
  });

  it('owner_id no longer refers to users: an organization owns rows, with every other foreign key intact', async () => {
    const keys = await selectRows<{ table: string; column: string; target: string }>(
      raw,
      `SELECT c.conrelid::regclass::text AS table, a.attname AS column, c.confrelid::regclass::text AS target
       FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
       WHERE c.contype = 'f'`,
    );
    expect(keys.filter((key) => key.column === 'owner_id')).toEqual([]);
    expect(keys).toEqual(
      expect.arrayContaining([
        { table: 'identities', column: 'user_id', target: 'users' },
        { table: 'vines', column: 'vineyard_id', target: 'vineyards' },
        { table: 'jobs', column: 'plan_job_id', target: 'jobs' },
        { table: 'log_chunks', column: 'job_id', target: 'jobs' },
        { table: 'state_locks', column: 'vine_id', target: 'vines' },
        { table: 'org_members', column: 'org_id', target: 'orgs' },
        { table: 'org_members', column: 'user_id', target: 'users' },
      ]),
    );
  });

  it('a member scope sees the person and the organizations they joined, nothing else, in every owned table', async () => {
    await asScope(raw, { owner: '', actor: alice.id }, async (trx) => {
      for (const [table, column] of OWNED) {
        const expected = column === 'owner_id' ? [alice.id, o1.id] : [alice.id];
        expect(await ownersIn(trx, table, column), table).toEqual(new Set(expected));
      }
      expect(await ownersIn(trx, 'orgs', 'id')).toEqual(new Set([o1.id]));
      // o1's members, and alice's own invitation to o2 (not the rest of o2's members).
      const members = await selectRows<{ id: string }>(trx, 'SELECT id FROM org_members');
      const invitation = o2.members[1] as OrgMember;
      expect(new Set(members.map((member) => member.id))).toEqual(
        new Set([...o1.members.map((member) => member.id), invitation.id]),
      );
      // The function itself: alice and o1, computed from the database, not from the caller.
      const [visible] = await selectRows<{ owners: string[] }>(trx, 'SELECT trellis_visible_owners() AS owners');
      expect(new Set(visible?.owners)).toEqual(new Set([alice.id, o1.id]));
    });
  });

  it("an owner scope of an organization with a joined member as actor sees exactly the organization's rows", async () => {
    for (const actor of [alice.id, bob.id]) {
      await asScope(raw, { owner: o1.id, actor }, async (trx) => {
        for (const [table, column] of ALL_OWNED) {
          const expected = ORG_OWNED.some(([owned]) => owned === table) ? [o1.id] : [];
          expect(await ownersIn(trx, table, column), `${table} as ${actor}`).toEqual(new Set(expected));
        }
      });
    }
  });

  it('a pending membership, or none, sees nothing of the organization and cannot write its rows', async () => {
    for (const [org, actor] of [
      [o2, alice.id],
      [o3, alice.id],
      [o1, carol.id],
    ] as const) {
      await asScope(raw, { owner: org.id, actor }, async (trx) => {
        for (const [table] of ALL_OWNED) {
          expect(await selectRows(trx, `SELECT 1 FROM ${table}`), `${table}`).toEqual([]);
        }
        await expect(
          trx.raw("INSERT INTO vineyards (id, owner_id, name, created_at) VALUES (?, ?, 'x', now())", [
            randomUUID(),
            org.id,
          ]),
        ).rejects.toThrow(/row-level security/);
      });
      await asScope(raw, { owner: org.id, actor }, async (trx) => {
        await expect(
          trx.raw(
            "INSERT INTO org_members (id, org_id, user_id, email, role, created_at, joined_at) VALUES (?, ?, ?, 'x@example.test', 'owner', now(), now())",
            [randomUUID(), org.id, actor],
          ),
        ).rejects.toThrow(/row-level security/);
      });
    }
  });

  it("writes of another owner's rows are refused, in owner and member scopes", async () => {
    for (const settings of [
      { owner: o1.id, actor: alice.id },
      { owner: '', actor: alice.id },
    ]) {
      for (const owner of [o3.id, carol.id, o2.id]) {
        await asScope(raw, settings, async (trx) => {
          await expect(
            trx.raw("INSERT INTO vineyards (id, owner_id, name, created_at) VALUES (?, ?, 'x', now())", [
              randomUUID(),
              owner,
            ]),
          ).rejects.toThrow(/row-level security/);
        });
      }
      await asScope(raw, settings, async (trx) => {
        await expect(trx.raw('UPDATE vineyards SET owner_id = ? WHERE owner_id = ?', [o3.id, o1.id])).rejects.toThrow(
          /row-level security/,
        );
      });
      await asScope(raw, settings, async (trx) => {
        const updated = await trx.raw("UPDATE orgs SET name = name || '!' RETURNING id");
        expect(updated.rows.map((row: { id: string }) => row.id)).toEqual([o1.id]);
        const deleted = await trx.raw('DELETE FROM org_members WHERE org_id <> ? RETURNING id', [o1.id]);
        expect(deleted.rows).toEqual([]);
      });
    }
  });

  it('a membership counts only while it is joined: removing it closes the organization at once', async () => {
    const membership = o1.members[1] as OrgMember;
    await asScope(
      raw,
      { owner: o1.id, actor: alice.id },
      async (trx) => {
        expect(await selectRows(trx, 'SELECT 1 FROM vineyards')).toEqual([]);
      },
      async (trx) => {
        await trx.raw('DELETE FROM org_members WHERE id = ?', [membership.id]);
      },
    );
    await asScope(
      raw,
      { owner: '', actor: alice.id },
      async (trx) => {
        expect(await ownersIn(trx, 'vineyards', 'owner_id')).toEqual(new Set([alice.id]));
      },
      async (trx) => {
        await trx.raw('UPDATE org_members SET user_id = NULL, joined_at = NULL WHERE id = ?', [membership.id]);
      },
    );
  });

  it('a person may claim only the pending invitations at their own email', async () => {
    const invitation = o2.members[1] as OrgMember;
    await asScope(raw, { owner: alice.id, actor: alice.id }, async (trx) => {
      const claimed = await trx.raw(
        'UPDATE org_members SET user_id = ?, joined_at = now() WHERE user_id IS NULL RETURNING id',
        [alice.id],
      );
      expect(claimed.rows.map((row: { id: string }) => row.id)).toEqual([invitation.id]);
      // Joined now: o2 is visible to alice's member work from the next statement on.
      await trx.raw("SELECT set_config('trellis.user_id', '', true)");
      expect(await ownersIn(trx, 'vineyards', 'owner_id')).toEqual(new Set([alice.id, o1.id, o2.id]));
    });
    // Nor for someone else, nor someone else's invitation.
    await asScope(raw, { owner: carol.id, actor: carol.id }, async (trx) => {
      const claimed = await trx.raw(
        'UPDATE org_members SET user_id = ?, joined_at = now() WHERE user_id IS NULL RETURNING id',
        [carol.id],
      );
      expect(claimed.rows).toEqual([]);
    });
    await asScope(raw, { owner: alice.id, actor: alice.id }, async (trx) => {
      await expect(
        trx.raw('UPDATE org_members SET user_id = ?, joined_at = now() WHERE id = ?', [bob.id, invitation.id]),
      ).rejects.toThrow(/row-level security/);
    });
  });

  it("the store's units of work set owner and actor: a member scope and an organization's owner scope through the stores", async () => {
    const { store, close } = await databases.openStore();
    try {
      const uow = store.uow;
      const dave = (await seedEverything(uow)).id;
      const org = await seedOrg(uow, 'mine', [{ user: dave, email: `${dave}@example.test`, role: 'owner' }]);
      const stranger = (await seedEverything(uow)).id;
      // The orgIds core passes are narrowed by the database to those the person really joined.
      const seen = await uow.run(memberScope(dave, [org.id]), (stores) => stores.vineyards.list(org.id));
      expect(seen.map((vineyard) => vineyard.id)).toEqual([org.vineyardId]);
      expect(await uow.run(memberScope(stranger, [org.id]), (stores) => stores.vineyards.list(org.id))).toEqual([]);
      expect(await uow.run(ownerScope(org.id, stranger), (stores) => stores.orgs.get(org.id))).toBeNull();
      await expect(
        uow.run(ownerScope(org.id, stranger), (stores) =>
          stores.vineyards.create({
            id: randomUUID(),
            owner_id: org.id,
            name: 'nope',
            created_at: new Date().toISOString(),
          }),
        ),
      ).rejects.toThrow(/row-level security/);
      expect(await uow.run(ownerScope(org.id, dave), (stores) => stores.orgs.get(org.id))).not.toBeNull();
    } finally {
      await close();
    }
  });
});
