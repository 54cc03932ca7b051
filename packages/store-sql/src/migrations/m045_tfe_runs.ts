import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { APP_ROLE } from '../schema.js';
import { visibleOwnersCheck } from './m024_row_security_once.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Remote runs of the stock CLI (issue 27): a run is its PLAN job; this row keeps what the job does
 * not say of it (what the CLI asked for, a confirmation, a discard), keyed by the plan job and
 * deleted with it. Owned rows with the row-level security of every owned table (m010). Additive.
 */
export const tfeRunsMigration: TrellisMigration = {
  name: '045_tfe_runs',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const isPostgres = dialect === 'postgres';
    const time = (table: Knex.CreateTableBuilder, name: string) =>
      table.specificType(name, isPostgres ? 'timestamptz' : 'text');
    const json = (table: Knex.CreateTableBuilder, name: string) =>
      table.specificType(name, isPostgres ? 'jsonb' : 'text');
    await knex.schema.createTable('tfe_runs', (t) => {
      t.uuid('plan_job_id').primary().references('id').inTable('jobs').onDelete('CASCADE');
      t.uuid('owner_id').notNullable();
      t.uuid('vine_id').notNullable();
      t.uuid('configuration_version_id').notNullable();
      t.text('message').notNullable();
      t.boolean('is_destroy').notNullable();
      t.boolean('auto_apply').notNullable();
      t.boolean('plan_only').notNullable();
      t.boolean('save_plan').notNullable();
      t.boolean('refresh').notNullable();
      t.boolean('refresh_only').notNullable();
      json(t, 'target_addrs').notNullable();
      json(t, 'replace_addrs').notNullable();
      json(t, 'variable_keys').notNullable();
      time(t, 'confirmed_at');
      t.uuid('confirmed_by');
      t.uuid('apply_job_id');
      time(t, 'discarded_at');
      t.uuid('discarded_by');
      t.uuid('created_by').notNullable();
      time(t, 'created_at').notNullable();
      t.index(['owner_id', 'vine_id', 'created_at'], 'tfe_runs_vine_idx');
    });
    if (!isPostgres) return;
    const [current] = (await knex.raw('SELECT current_schema() AS schema')).rows as { schema: string }[];
    if (!current) throw new Error('m045: no current schema');
    const check = visibleOwnersCheck('owner_id', current.schema);
    await knex.raw(`GRANT SELECT, INSERT, UPDATE, DELETE ON tfe_runs TO ${APP_ROLE}`);
    await knex.raw('ALTER TABLE tfe_runs ENABLE ROW LEVEL SECURITY');
    await knex.raw(`
      CREATE POLICY tfe_runs_visible_owners ON tfe_runs TO ${APP_ROLE}
        USING (${check}) WITH CHECK (${check})`);
  },
};
