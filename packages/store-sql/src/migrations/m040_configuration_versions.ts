import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { APP_ROLE } from '../schema.js';
import { visibleOwnersCheck } from './m024_row_security_once.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Configuration versions (issue 23): the immutable tarballs of a vine's configuration that agents
 * download and run, made by the control plane from a connected vine's commit (`git`) or uploaded
 * through the Terraform Cloud protocol (`upload`, issue 27). The bytes are in the artifact store
 * under `storage_key`; the row holds their sha256 and size, which are the one truth about them.
 * Owned rows with the row-level security of every owned table (m010); they go with their vine.
 */
export const configurationVersionsMigration: TrellisMigration = {
  name: '040_configuration_versions',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const isPostgres = dialect === 'postgres';
    const time = (table: Knex.CreateTableBuilder, name: string) =>
      table.specificType(name, isPostgres ? 'timestamptz' : 'text');
    await knex.schema.createTable('configuration_versions', (t) => {
      t.uuid('id').primary();
      t.uuid('owner_id').notNullable();
      t.uuid('vine_id').notNullable().references('id').inTable('vines').onDelete('CASCADE');
      t.text('source').notNullable();
      t.text('provider');
      t.text('repository');
      t.text('commit_sha');
      t.text('ref');
      t.text('status').notNullable();
      t.text('storage_key');
      t.text('sha256');
      t.bigInteger('size');
      t.integer('strip_components').notNullable();
      t.text('error_code');
      t.text('error_message');
      t.uuid('created_by');
      time(t, 'created_at').notNullable();
      time(t, 'updated_at').notNullable();
      t.check(`source IN ('git', 'upload')`, [], 'configuration_versions_source_check');
      t.check(`status IN ('pending', 'uploaded', 'errored')`, [], 'configuration_versions_status_check');
      t.index(['owner_id', 'vine_id', 'commit_sha', 'status'], 'configuration_versions_commit_idx');
    });
    if (!isPostgres) return;
    const [current] = (await knex.raw('SELECT current_schema() AS schema')).rows as { schema: string }[];
    if (!current) throw new Error('m040: no current schema');
    const check = visibleOwnersCheck('owner_id', current.schema);
    await knex.raw(`GRANT SELECT, INSERT, UPDATE, DELETE ON configuration_versions TO ${APP_ROLE}`);
    await knex.raw('ALTER TABLE configuration_versions ENABLE ROW LEVEL SECURITY');
    await knex.raw(`
      CREATE POLICY configuration_versions_visible_owners ON configuration_versions TO ${APP_ROLE}
        USING (${check}) WITH CHECK (${check})`);
  },
};
