import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { APP_ROLE } from '../schema.js';
import { visibleOwnersCheck } from './m024_row_security_once.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * The module registry (issue 28): `registry_modules` (one per owner, name and system, with its
 * latest version) and `registry_module_versions` (each published version, immutable, its bytes in
 * the artifact store under `storage_key`; unique per module and version, which is what makes a
 * second publish of a version a conflict). Owned rows with the row-level security of every owned
 * table (m010); a module's versions go with it. Additive.
 */
export const registryModulesMigration: TrellisMigration = {
  name: '048_registry_modules',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const isPostgres = dialect === 'postgres';
    const time = (table: Knex.CreateTableBuilder, name: string) =>
      table.specificType(name, isPostgres ? 'timestamptz' : 'text');
    await knex.schema.createTable('registry_modules', (t) => {
      t.bigIncrements('seq', { primaryKey: true });
      t.uuid('id').notNullable().unique({ indexName: 'registry_modules_id_unique' });
      t.uuid('owner_id').notNullable();
      t.text('name').notNullable();
      t.text('system').notNullable();
      t.text('latest_version');
      time(t, 'created_at').notNullable();
      time(t, 'updated_at').notNullable();
      t.unique(['owner_id', 'name', 'system'], { indexName: 'registry_modules_owner_name_unique' });
      t.index(['owner_id', 'created_at', 'seq'], 'registry_modules_owner_idx');
    });
    await knex.schema.createTable('registry_module_versions', (t) => {
      t.uuid('id').primary();
      t.uuid('owner_id').notNullable();
      t.uuid('module_id').notNullable().references('id').inTable('registry_modules').onDelete('CASCADE');
      t.text('version').notNullable();
      t.text('storage_key').notNullable();
      t.bigInteger('size').notNullable();
      t.text('sha256').notNullable();
      time(t, 'deprecated_at');
      t.text('deprecation_reason');
      t.uuid('published_by');
      time(t, 'created_at').notNullable();
      t.unique(['module_id', 'version'], { indexName: 'registry_module_versions_version_unique' });
    });
    if (!isPostgres) return;
    const [current] = (await knex.raw('SELECT current_schema() AS schema')).rows as { schema: string }[];
    if (!current) throw new Error('m048: no current schema');
    const check = visibleOwnersCheck('owner_id', current.schema);
    for (const table of ['registry_modules', 'registry_module_versions']) {
      await knex.raw(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO ${APP_ROLE}`);
      await knex.raw(`ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`);
      await knex.raw(`
        CREATE POLICY ${table}_visible_owners ON ${table} TO ${APP_ROLE}
          USING (${check}) WITH CHECK (${check})`);
    }
    await knex.raw(`GRANT USAGE ON SEQUENCE registry_modules_seq_seq TO ${APP_ROLE}`);
  },
};
