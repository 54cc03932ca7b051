import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { APP_ROLE } from '../schema.js';
import { visibleOwnersCheck } from './m024_row_security_once.js';
import type { TrellisMigration } from './TrellisMigration.js';

const TABLES = [
  'registry_providers',
  'registry_provider_versions',
  'registry_provider_platforms',
  'registry_gpg_keys',
] as const;

/**
 * The private registry's providers (issue 28): a provider per owner and type, its immutable
 * versions (protocols, `SHA256SUMS` and its signature, the key that made it), their platforms
 * (the zips are in the artifact store under `storage_key`, the row holds their sha256), and the
 * owners' GPG public keys. Owned rows with the row-level security of every owned table (m010).
 * Additive.
 */
export const registryProvidersMigration: TrellisMigration = {
  name: '049_registry_providers',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const isPostgres = dialect === 'postgres';
    const time = (table: Knex.CreateTableBuilder, name: string) =>
      table.specificType(name, isPostgres ? 'timestamptz' : 'text');
    const json = (table: Knex.CreateTableBuilder, name: string) =>
      table.specificType(name, isPostgres ? 'jsonb' : 'text');
    await knex.schema.createTable('registry_providers', (t) => {
      t.uuid('id').primary();
      t.uuid('owner_id').notNullable();
      t.text('type').notNullable();
      t.uuid('created_by').notNullable();
      time(t, 'created_at').notNullable();
      t.unique(['owner_id', 'type'], { indexName: 'registry_providers_owner_type_unique' });
    });
    await knex.schema.createTable('registry_provider_versions', (t) => {
      t.uuid('id').primary();
      t.uuid('owner_id').notNullable();
      t.uuid('provider_id').notNullable().references('id').inTable('registry_providers').onDelete('CASCADE');
      t.text('version').notNullable();
      json(t, 'protocols').notNullable();
      t.text('shasums').notNullable();
      t.text('shasums_signature').notNullable();
      t.text('key_id').notNullable();
      t.uuid('created_by').notNullable();
      time(t, 'created_at').notNullable();
      t.unique(['provider_id', 'version'], { indexName: 'registry_provider_versions_version_unique' });
    });
    await knex.schema.createTable('registry_provider_platforms', (t) => {
      t.uuid('id').primary();
      t.uuid('owner_id').notNullable();
      t.uuid('version_id').notNullable().references('id').inTable('registry_provider_versions').onDelete('CASCADE');
      t.text('os').notNullable();
      t.text('arch').notNullable();
      t.text('filename').notNullable();
      t.text('shasum').notNullable();
      t.bigInteger('size').notNullable();
      t.text('storage_key').notNullable();
      t.uuid('created_by').notNullable();
      time(t, 'created_at').notNullable();
      t.unique(['version_id', 'os', 'arch'], { indexName: 'registry_provider_platforms_platform_unique' });
    });
    await knex.schema.createTable('registry_gpg_keys', (t) => {
      t.uuid('id').primary();
      t.uuid('owner_id').notNullable();
      t.text('key_id').notNullable();
      t.text('ascii_armor').notNullable();
      t.uuid('created_by').notNullable();
      time(t, 'created_at').notNullable();
      t.unique(['owner_id', 'key_id'], { indexName: 'registry_gpg_keys_key_unique' });
    });
    if (!isPostgres) return;
    const [current] = (await knex.raw('SELECT current_schema() AS schema')).rows as { schema: string }[];
    if (!current) throw new Error('m049: no current schema');
    const check = visibleOwnersCheck('owner_id', current.schema);
    for (const table of TABLES) {
      await knex.raw(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO ${APP_ROLE}`);
      await knex.raw(`ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`);
      await knex.raw(`
        CREATE POLICY ${table}_visible_owners ON ${table} TO ${APP_ROLE}
          USING (${check}) WITH CHECK (${check})`);
    }
  },
};
