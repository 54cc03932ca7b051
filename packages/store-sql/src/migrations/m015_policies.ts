import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { APP_ROLE } from '../schema.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Policies (issue 15): `policies` holds each policy at its current version (the claim of a PLAN
 * reads only this table), `policy_versions` every version, kept while the policy lives so the
 * version a plan was checked with can be read again. Both belong to the policy's owner and get
 * the row-level security of every owned table (m010).
 */
export const policiesMigration: TrellisMigration = {
  name: '015_policies',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const isPostgres = dialect === 'postgres';
    const time = (table: Knex.CreateTableBuilder, name: string) =>
      table.specificType(name, isPostgres ? 'timestamptz' : 'text');
    await knex.schema.createTable('policies', (t) => {
      t.bigIncrements('seq', { primaryKey: true });
      t.uuid('id').notNullable().unique({ indexName: 'policies_id_unique' });
      t.uuid('owner_id').notNullable();
      t.uuid('created_by').notNullable();
      t.uuid('org_id');
      t.text('name').notNullable();
      t.text('enforcement').notNullable();
      t.uuid('vineyard_id');
      t.integer('version').notNullable();
      t.text('module').notNullable();
      time(t, 'created_at').notNullable();
      time(t, 'updated_at').notNullable();
      t.check(`enforcement IN ('advisory', 'mandatory')`, [], 'policies_enforcement_check');
      t.index(['owner_id', 'created_at', 'seq'], 'policies_owner_idx');
    });
    await knex.schema.createTable('policy_versions', (t) => {
      t.bigIncrements('seq', { primaryKey: true });
      t.uuid('owner_id').notNullable();
      t.uuid('policy_id').notNullable().references('id').inTable('policies').onDelete('CASCADE');
      t.integer('version').notNullable();
      t.text('name').notNullable();
      t.text('enforcement').notNullable();
      t.text('module').notNullable();
      t.uuid('created_by').notNullable();
      time(t, 'created_at').notNullable();
      t.unique(['policy_id', 'version'], { indexName: 'policy_versions_policy_version_unique' });
    });
    if (!isPostgres) return;

    const [current] = (await knex.raw('SELECT current_schema() AS schema')).rows as { schema: string }[];
    if (!current) throw new Error('m015: no current schema');
    const s = `"${current.schema.replaceAll('"', '""')}"`;
    for (const table of ['policies', 'policy_versions']) {
      await knex.raw(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO ${APP_ROLE}`);
      await knex.raw(`GRANT USAGE ON SEQUENCE ${table}_seq_seq TO ${APP_ROLE}`);
      await knex.raw(`ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`);
      await knex.raw(`
        CREATE POLICY ${table}_visible_owners ON ${table} TO ${APP_ROLE}
          USING (owner_id = ANY (${s}.trellis_visible_owners()))
          WITH CHECK (owner_id = ANY (${s}.trellis_visible_owners()))`);
    }
  },
};
