import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { APP_ROLE } from '../schema.js';
import { visibleOwnersCheck } from './m024_row_security_once.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Modules published from git tags (issue 28): `module_repositories`, one repository per module
 * of a namespace (`owner_id`, `name`, `system`), owned by the namespace's owner with the
 * row-level security of every owned table (m010). Deliveries are remembered in `vcs_deliveries`
 * (m018), as git-driven runs' are.
 */
export const moduleRepositoriesMigration: TrellisMigration = {
  name: '051_module_repositories',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const isPostgres = dialect === 'postgres';
    const time = (table: Knex.CreateTableBuilder, name: string) =>
      table.specificType(name, isPostgres ? 'timestamptz' : 'text');
    await knex.schema.createTable('module_repositories', (t) => {
      t.uuid('id').primary();
      t.uuid('owner_id').notNullable();
      t.text('name').notNullable();
      t.text('system').notNullable();
      t.text('provider').notNullable();
      t.text('repository').notNullable();
      t.text('webhook_mode').notNullable();
      t.text('hook_id');
      t.text('webhook_secret_sealed').notNullable();
      t.uuid('connected_by').notNullable();
      /** JSON of `ModuleTagResult`: what the newest tag push did. */
      t.text('last_tag');
      time(t, 'created_at').notNullable();
      time(t, 'updated_at').notNullable();
      t.unique(['owner_id', 'name', 'system'], { indexName: 'module_repositories_module_key' });
      t.check(`provider IN ('github', 'gitlab', 'bitbucket')`, [], 'module_repositories_provider_check');
      t.check(`webhook_mode IN ('auto', 'manual')`, [], 'module_repositories_webhook_mode_check');
    });
    if (!isPostgres) return;

    const [current] = (await knex.raw('SELECT current_schema() AS schema')).rows as { schema: string }[];
    if (!current) throw new Error('m051: no current schema');
    const check = visibleOwnersCheck('owner_id', current.schema);
    await knex.raw(`GRANT SELECT, INSERT, UPDATE, DELETE ON module_repositories TO ${APP_ROLE}`);
    await knex.raw('ALTER TABLE module_repositories ENABLE ROW LEVEL SECURITY');
    await knex.raw(`
      CREATE POLICY module_repositories_visible_owners ON module_repositories TO ${APP_ROLE}
        USING (${check}) WITH CHECK (${check})`);
  },
};
