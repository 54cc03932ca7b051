import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { APP_ROLE } from '../schema.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * The audit log (issue 14): `audit_entries`, one row per state-changing action, written in the
 * unit of work of the change. `owner_id` names the user or organization whose log it is and no
 * table: entries outlive what they name (an organization's deletion leaves its log to the
 * retention prune).
 *
 * On Postgres the application role may only INSERT and SELECT (no UPDATE, no DELETE): the log is
 * append-only to the application; the retention prune runs as system work, as the connection's
 * own role. Row-level security as on every owned table (m010).
 */
export const auditMigration: TrellisMigration = {
  name: '014_audit',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const isPostgres = dialect === 'postgres';
    const time = (table: Knex.CreateTableBuilder, name: string) =>
      table.specificType(name, isPostgres ? 'timestamptz' : 'text');
    await knex.schema.createTable('audit_entries', (t) => {
      t.bigIncrements('seq', { primaryKey: true });
      t.uuid('id').notNullable().unique({ indexName: 'audit_entries_id_unique' });
      t.uuid('owner_id').notNullable();
      time(t, 'at').notNullable();
      t.text('actor_type').notNullable();
      t.text('actor_id');
      t.text('actor_email');
      t.text('action').notNullable();
      t.text('target_type').notNullable();
      t.text('target_id').notNullable();
      t.text('request_id');
      t.text('ip');
      t.specificType('details', isPostgres ? 'jsonb' : 'text').notNullable();
      t.check(`actor_type IN ('user', 'token', 'worker', 'system')`, [], 'audit_entries_actor_type_check');
      t.index(['owner_id', 'at', 'seq'], 'audit_entries_owner_idx');
      t.index(['owner_id', 'target_id'], 'audit_entries_target_idx');
      t.index(['at'], 'audit_entries_at_idx');
    });
    if (!isPostgres) return;

    const [current] = (await knex.raw('SELECT current_schema() AS schema')).rows as { schema: string }[];
    if (!current) throw new Error('m014: no current schema');
    const s = `"${current.schema.replaceAll('"', '""')}"`;
    // Append-only for the application: no UPDATE, no DELETE.
    await knex.raw(`GRANT SELECT, INSERT ON audit_entries TO ${APP_ROLE}`);
    await knex.raw(`GRANT USAGE ON SEQUENCE audit_entries_seq_seq TO ${APP_ROLE}`);
    await knex.raw('ALTER TABLE audit_entries ENABLE ROW LEVEL SECURITY');
    await knex.raw(`
      CREATE POLICY audit_entries_visible_owners ON audit_entries TO ${APP_ROLE}
        USING (owner_id = ANY (${s}.trellis_visible_owners()))
        WITH CHECK (owner_id = ANY (${s}.trellis_visible_owners()))`);
  },
};
