import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { APP_ROLE, OWNER_SETTING } from '../schema.js';
import type { TrellisMigration } from './TrellisMigration.js';

/** Each owned table and the column that names its owner. */
const OWNED_TABLES: ReadonlyArray<readonly [table: string, ownerColumn: string]> = [
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
  ['log_chunks', 'owner_id'],
  ['plan_artifacts', 'owner_id'],
];

/**
 * Postgres only (DESIGN §5): owner-scoped units of work run as `trellis_app`, a role that is not a
 * superuser, not the tables' owner and has no BYPASSRLS, so these policies bind it even when the
 * connection logs in as a superuser. An unset owner setting matches nothing: it fails closed.
 * System-scoped work runs as the connecting role, which owns the tables and so bypasses RLS.
 */
export const postgresRowSecurityMigration: TrellisMigration = {
  name: '002_postgres_row_security',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    if (dialect !== 'postgres') return;

    // Roles are cluster-wide and several databases may be migrated at once (one per test run):
    // a concurrent CREATE ROLE fails with duplicate_object or, when it lost the race on the
    // catalog's unique index, unique_violation. Either way the role exists afterwards.
    await knex.raw(`
      DO $$
      BEGIN
        CREATE ROLE ${APP_ROLE} NOLOGIN NOSUPERUSER NOBYPASSRLS;
      EXCEPTION WHEN duplicate_object OR unique_violation THEN
        NULL;
      END $$`);

    // A role made by hand beforehand must not defeat the policies.
    await knex.raw(`
      DO $$
      BEGIN
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${APP_ROLE}' AND (rolsuper OR rolbypassrls)) THEN
          RAISE EXCEPTION 'role ${APP_ROLE} must be neither a superuser nor BYPASSRLS: row-level security would not bind it';
        END IF;
      END $$`);

    // SET ROLE needs membership; a superuser has it implicitly (and then nothing is granted).
    // A failed GRANT is tolerated only if the membership is there anyway (granted meanwhile).
    await knex.raw(`
      DO $$
      BEGIN
        IF NOT pg_has_role(current_user, '${APP_ROLE}', 'MEMBER') THEN
          EXECUTE format('GRANT ${APP_ROLE} TO %I', current_user);
        END IF;
      EXCEPTION WHEN OTHERS THEN
        IF NOT pg_has_role(current_user, '${APP_ROLE}', 'MEMBER') THEN
          RAISE;
        END IF;
      END $$`);

    await knex.raw(`
      DO $$
      BEGIN
        EXECUTE format('GRANT USAGE ON SCHEMA %I TO ${APP_ROLE}', current_schema());
      END $$`);
    const owned = OWNED_TABLES.map(([table]) => table).join(', ');
    await knex.raw(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${owned} TO ${APP_ROLE}`);
    await knex.raw(
      `GRANT USAGE ON SEQUENCE vineyards_seq_seq, vines_seq_seq, workers_seq_seq, jobs_seq_seq, log_chunks_id_seq TO ${APP_ROLE}`,
    );
    // Releases belong to nobody: readable by the app role, written only by system work.
    await knex.raw(`GRANT SELECT ON worker_releases TO ${APP_ROLE}`);

    const currentOwner = `nullif(current_setting('${OWNER_SETTING}', true), '')::uuid`;
    for (const [table, ownerColumn] of OWNED_TABLES) {
      await knex.raw(`ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`);
      await knex.raw(`
        CREATE POLICY ${table}_owner_isolation ON ${table} TO ${APP_ROLE}
          USING (${ownerColumn} = ${currentOwner})
          WITH CHECK (${ownerColumn} = ${currentOwner})`);
    }
  },
};
