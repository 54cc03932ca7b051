import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { APP_ROLE } from '../schema.js';
import { visibleOwnersCheck } from './m024_row_security_once.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * The provider network mirror (issue 28): one row per archive an owner pushed, unique per
 * (owner, provider, version, platform). The bytes are in the artifact store under `storage_key`;
 * the row holds their sha256 (`zh:`) and the `h1:` hash of the files inside. Owned rows with the
 * row-level security of every owned table; they go with their organization. Additive.
 */
export const providerMirrorMigration: TrellisMigration = {
  name: '050_provider_mirror',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const isPostgres = dialect === 'postgres';
    await knex.schema.createTable('mirror_archives', (t) => {
      t.bigIncrements('seq', { primaryKey: true });
      t.uuid('id').notNullable().unique({ indexName: 'mirror_archives_id_unique' });
      t.uuid('owner_id').notNullable();
      t.text('hostname').notNullable();
      t.text('namespace').notNullable();
      t.text('type').notNullable();
      t.text('version').notNullable();
      t.text('os').notNullable();
      t.text('arch').notNullable();
      t.text('storage_key').notNullable();
      t.bigInteger('size').notNullable();
      t.text('sha256').notNullable();
      t.text('h1').notNullable();
      t.uuid('created_by');
      t.specificType('created_at', isPostgres ? 'timestamptz' : 'text').notNullable();
      t.unique(['owner_id', 'hostname', 'namespace', 'type', 'version', 'os', 'arch'], {
        indexName: 'mirror_archives_address_unique',
      });
      t.index(['owner_id', 'created_at', 'seq'], 'mirror_archives_owner_idx');
    });
    if (!isPostgres) return;
    const [current] = (await knex.raw('SELECT current_schema() AS schema')).rows as { schema: string }[];
    if (!current) throw new Error('m050: no current schema');
    const check = visibleOwnersCheck('owner_id', current.schema);
    await knex.raw(`GRANT SELECT, INSERT, DELETE ON mirror_archives TO ${APP_ROLE}`);
    await knex.raw(`GRANT USAGE ON SEQUENCE mirror_archives_seq_seq TO ${APP_ROLE}`);
    await knex.raw('ALTER TABLE mirror_archives ENABLE ROW LEVEL SECURITY');
    await knex.raw(`
      CREATE POLICY mirror_archives_visible_owners ON mirror_archives TO ${APP_ROLE}
        USING (${check}) WITH CHECK (${check})`);
  },
};
