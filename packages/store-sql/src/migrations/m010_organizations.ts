import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { ACTOR_SETTING, APP_ROLE, OWNER_SETTING } from '../schema.js';
import type { TrellisMigration } from './TrellisMigration.js';

/** The roles of m010 (frozen here: a new role is a new migration). */
const ROLES = ['viewer', 'operator', 'admin', 'owner'] as const;

/** The tables whose `owner_id` referred to users: an owner may now be an organization. */
const OWNER_ID_TABLES = [
  'vineyards',
  'cloud_identities',
  'vines',
  'vine_components',
  'workers',
  'jobs',
  'config_snapshots',
  'log_chunks',
  'plan_artifacts',
  'state_versions',
  'state_locks',
] as const;

/** Every owned table and its owner column, as of m010 (the policies below replace m002's). */
const OWNED_TABLES: ReadonlyArray<readonly [table: string, ownerColumn: string]> = [
  ['users', 'id'],
  ['identities', 'user_id'],
  ['cli_logins', 'profile_id'],
  ['refresh_tokens', 'user_id'],
  ...OWNER_ID_TABLES.map((table) => [table, 'owner_id'] as const),
  ['orgs', 'id'],
  ['org_members', 'org_id'],
];

/**
 * Organizations (issue 12): `orgs` and their members, `org_members`. A member invited by an email
 * that has not signed in yet is pending (`user_id` and `joined_at` null) until first sign-in.
 *
 * An owner is a user or an organization, so `owner_id` no longer refers to users. On SQLite that
 * means rebuilding each of those tables (SQLite cannot drop a constraint): the migration runs
 * outside knex's transaction, turns foreign keys off (which SQLite ignores inside a transaction,
 * and a table that other tables refer to cannot be dropped with them on), rebuilds every table in
 * one transaction of its own with its CREATE TABLE text changed only by the one clause, puts back
 * its indexes and triggers verbatim and its AUTOINCREMENT high-water mark, checks every foreign
 * key (`PRAGMA foreign_key_check`) and commits, then turns foreign keys back on.
 *
 * On Postgres, row-level security follows membership. Units of work set two settings: the owner
 * (`trellis.user_id`, empty in a member scope) and the actor (`trellis.actor_id`: the acting
 * person, or the owner acting itself). `trellis_visible_owners()` turns them into the owners whose
 * rows are visible: in an owner scope, the owner when the actor is the owner itself or a joined
 * member of it (otherwise nobody); in a member scope (no owner), the person and every
 * organization they have joined. Every owned table's policy is `owner = ANY (that array)`: the
 * function is STABLE, so it is computed once per statement and the comparison can use the owner
 * indexes. Unset settings make it empty: fail closed.
 *
 * Two more policies let a person's own work (member scope, or owner scope of themselves) read
 * their own membership rows and the pending invitations at their user row's email, and claim
 * those invitations (set `user_id` to themselves): what `OrgStore.membershipsOf` and `joinPending`
 * need outside system work.
 */
export const organizationsMigration: TrellisMigration = {
  name: '010_organizations',
  transactional: (dialect) => dialect !== 'sqlite',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    if (dialect === 'sqlite') {
      await upSqlite(knex);
      return;
    }
    await createTables(knex, 'postgres');
    for (const table of OWNER_ID_TABLES) {
      await knex.raw(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_owner_id_foreign`);
    }
    await rowSecurity(knex);
  },
};

async function createTables(knex: Knex, dialect: DialectName): Promise<void> {
  const time = dialect === 'postgres' ? 'timestamptz' : 'text';
  const roles = ROLES.map((role) => `'${role}'`).join(', ');
  await knex.schema.createTable('orgs', (t) => {
    t.uuid('id').primary();
    t.text('name').notNullable();
    t.specificType('created_at', time).notNullable();
  });
  await knex.raw('CREATE UNIQUE INDEX orgs_name_unique ON orgs (lower(name))');

  await knex.schema.createTable('org_members', (t) => {
    // `seq`: members page oldest first by (created_at, seq).
    t.bigIncrements('seq', { primaryKey: true });
    t.uuid('id').notNullable().unique({ indexName: 'org_members_id_unique' });
    t.uuid('org_id').notNullable().references('id').inTable('orgs').onDelete('CASCADE');
    t.uuid('user_id').references('id').inTable('users');
    t.text('email').notNullable();
    t.text('role').notNullable();
    t.specificType('created_at', time).notNullable();
    t.specificType('joined_at', time);
    t.check(`role IN (${roles})`, [], 'org_members_role_check');
    t.check('(user_id IS NULL) = (joined_at IS NULL)', [], 'org_members_joined_check');
    t.index(['org_id', 'created_at', 'seq'], 'org_members_org_idx');
    t.index(['user_id'], 'org_members_user_idx');
  });
  await knex.raw('CREATE UNIQUE INDEX org_members_org_email_unique ON org_members (org_id, lower(email))');
}

interface SchemaRow {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

async function upSqlite(knex: Knex): Promise<void> {
  // The pool has one connection (SqliteDialect), so these pragmas and the transaction share it.
  await knex.raw('PRAGMA foreign_keys = OFF');
  try {
    await knex.transaction(async (trx) => {
      // Committed once already (the process stopped before knex recorded it): nothing to do.
      const done: SchemaRow[] = await trx.raw(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'orgs'`);
      if (done.length > 0) return;
      for (const table of OWNER_ID_TABLES) await rebuildWithoutOwnerForeignKey(trx, table);
      await createTables(trx, 'sqlite');
      const broken: unknown[] = await trx.raw('PRAGMA foreign_key_check');
      if (broken.length > 0) {
        throw new Error(`m010: ${broken.length} rows break a foreign key after the rebuild: ${JSON.stringify(broken)}`);
      }
    });
  } finally {
    await knex.raw('PRAGMA foreign_keys = ON');
  }
}

/** SQLite's own procedure for a change ALTER TABLE cannot make (sqlite.org/lang_altertable.html). */
async function rebuildWithoutOwnerForeignKey(trx: Knex.Transaction, table: string): Promise<void> {
  const schema: SchemaRow[] = await trx.raw(
    `SELECT type, name, tbl_name, sql FROM sqlite_master WHERE tbl_name = ? AND sql IS NOT NULL ORDER BY rowid`,
    [table],
  );
  const create = schema.find((row) => row.type === 'table' && row.name === table)?.sql;
  if (!create) throw new Error(`m010: no table ${table}`);
  const clause = ', foreign key(`owner_id`) references `users`(`id`)';
  if (create.split(clause).length !== 2) throw new Error(`m010: ${table} does not read as m001..m006 made it`);
  const prefix = `CREATE TABLE \`${table}\` (`;
  if (!create.startsWith(prefix)) throw new Error(`m010: ${table} does not read as m001..m006 made it`);
  const rebuilt = `_m010_${table}`;
  const sequence: { seq: number }[] = await trx.raw('SELECT seq FROM sqlite_sequence WHERE name = ?', [table]);

  await trx.raw(`CREATE TABLE \`${rebuilt}\` (${create.slice(prefix.length).replace(clause, '')}`);
  await trx.raw(`INSERT INTO \`${rebuilt}\` SELECT * FROM \`${table}\``);
  await trx.raw(`DROP TABLE \`${table}\``);
  await trx.raw(`ALTER TABLE \`${rebuilt}\` RENAME TO \`${table}\``);
  for (const row of schema) {
    if ((row.type === 'index' || row.type === 'trigger') && row.sql !== null) await trx.raw(row.sql);
  }
  // The copy's AUTOINCREMENT counter is its highest row; the original may have handed out more.
  const highWater = sequence[0]?.seq;
  if (highWater !== undefined) {
    await trx.raw('UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?', [highWater, table]);
  }
}

async function rowSecurity(knex: Knex): Promise<void> {
  const [current] = (await knex.raw('SELECT current_schema() AS schema')).rows as { schema: string }[];
  if (!current) throw new Error('m010: no current schema');
  const schema = current.schema;
  const s = `"${schema.replaceAll('"', '""')}"`;
  const owner = `nullif(current_setting('${OWNER_SETTING}', true), '')::uuid`;
  const actor = `nullif(current_setting('${ACTOR_SETTING}', true), '')::uuid`;

  await knex.raw(`GRANT SELECT, INSERT, UPDATE, DELETE ON orgs, org_members TO ${APP_ROLE}`);
  await knex.raw(`GRANT USAGE ON SEQUENCE org_members_seq_seq TO ${APP_ROLE}`);

  // SECURITY DEFINER: it reads org_members as their owner (not bound by the policies it serves).
  await knex.raw(`
    CREATE FUNCTION ${s}.trellis_visible_owners() RETURNS uuid[]
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
      SELECT CASE
        WHEN o.owner IS NOT NULL THEN
          CASE WHEN o.actor = o.owner OR EXISTS (
                 SELECT 1 FROM ${s}.org_members m
                 WHERE m.org_id = o.owner AND m.user_id = o.actor AND m.joined_at IS NOT NULL)
            THEN ARRAY[o.owner] ELSE ARRAY[]::uuid[] END
        WHEN o.actor IS NOT NULL THEN
          ARRAY[o.actor] || ARRAY(
            SELECT m.org_id FROM ${s}.org_members m WHERE m.user_id = o.actor AND m.joined_at IS NOT NULL)
        ELSE ARRAY[]::uuid[]
      END
      FROM (SELECT ${owner} AS owner, ${actor} AS actor) o
    $$`);
  // The person whose own work this is: the actor of a member scope, or of an owner scope that is
  // the actor's own; null otherwise (an organization's work, or unset settings).
  await knex.raw(`
    CREATE FUNCTION ${s}.trellis_self() RETURNS uuid
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
    AS $$
      SELECT CASE WHEN o.owner IS NULL OR o.owner = o.actor THEN o.actor END
      FROM (SELECT ${owner} AS owner, ${actor} AS actor) o
    $$`);
  await knex.raw(`
    CREATE FUNCTION ${s}.trellis_self_email() RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
      SELECT lower(u.email) FROM ${s}.users u WHERE u.id = ${s}.trellis_self()
    $$`);
  for (const fn of ['trellis_visible_owners()', 'trellis_self()', 'trellis_self_email()']) {
    await knex.raw(`REVOKE ALL ON FUNCTION ${s}.${fn} FROM PUBLIC`);
    await knex.raw(`GRANT EXECUTE ON FUNCTION ${s}.${fn} TO ${APP_ROLE}`);
  }

  for (const [table, column] of OWNED_TABLES) {
    if (table === 'orgs' || table === 'org_members') {
      await knex.raw(`ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`);
    } else {
      await knex.raw(`DROP POLICY ${table}_owner_isolation ON ${table}`);
    }
    await knex.raw(`
      CREATE POLICY ${table}_visible_owners ON ${table} TO ${APP_ROLE}
        USING (${column} = ANY (${s}.trellis_visible_owners()))
        WITH CHECK (${column} = ANY (${s}.trellis_visible_owners()))`);
  }

  const invited = `(user_id IS NULL AND lower(email) = ${s}.trellis_self_email())`;
  await knex.raw(`
    CREATE POLICY org_members_self_read ON org_members FOR SELECT TO ${APP_ROLE}
      USING (user_id = ${s}.trellis_self() OR ${invited})`);
  await knex.raw(`
    CREATE POLICY org_members_self_join ON org_members FOR UPDATE TO ${APP_ROLE}
      USING (${invited})
      WITH CHECK (user_id = ${s}.trellis_self() AND lower(email) = ${s}.trellis_self_email())`);
}
