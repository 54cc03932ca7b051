import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { APP_ROLE } from '../schema.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * API tokens for automation (issue 12). Only the SHA-256 of a token is stored (`token_hash`,
 * unique: authentication looks tokens up by it). A token's owner is its creator (personal) or its
 * organization; `owner_id` and `org_id` name no table, so this migration needs none of the
 * organizations' tables, and an organization's deletion removes its tokens in core.
 *
 * On Postgres the table has row-level security like every owned table since migration 010: the
 * application role sees and writes only rows of the owners `trellis_visible_owners()` gives (the
 * owner of an owner scope when the actor may act for it; a person and their organizations in a
 * member scope). Authentication finds a token by its hash as system work.
 */
export const apiTokensMigration: TrellisMigration = {
  name: '011_api_tokens',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const isPostgres = dialect === 'postgres';
    const time = (table: Knex.CreateTableBuilder, name: string) =>
      table.specificType(name, isPostgres ? 'timestamptz' : 'text');
    await knex.schema.createTable('api_tokens', (t) => {
      t.bigIncrements('seq', { primaryKey: true });
      t.uuid('id').notNullable().unique({ indexName: 'api_tokens_id_unique' });
      t.uuid('owner_id').notNullable();
      t.uuid('created_by').notNullable().references('id').inTable('users');
      t.uuid('org_id');
      t.text('name').notNullable();
      t.text('role');
      t.text('token_hash').notNullable().unique({ indexName: 'api_tokens_token_hash_unique' });
      time(t, 'created_at').notNullable();
      time(t, 'expires_at');
      time(t, 'last_used_at');
      time(t, 'revoked_at');
      t.index(['owner_id', 'created_at', 'seq'], 'api_tokens_owner_idx');
      t.index(['created_by'], 'api_tokens_created_by_idx');
    });
    if (!isPostgres) return;

    const [current] = (await knex.raw('SELECT current_schema() AS schema')).rows as { schema: string }[];
    if (!current) throw new Error('m011: no current schema');
    const s = `"${current.schema.replaceAll('"', '""')}"`;
    await knex.raw(`GRANT SELECT, INSERT, UPDATE, DELETE ON api_tokens TO ${APP_ROLE}`);
    await knex.raw(`GRANT USAGE ON SEQUENCE api_tokens_seq_seq TO ${APP_ROLE}`);
    await knex.raw('ALTER TABLE api_tokens ENABLE ROW LEVEL SECURITY');
    await knex.raw(`
      CREATE POLICY api_tokens_visible_owners ON api_tokens TO ${APP_ROLE}
        USING (owner_id = ANY (${s}.trellis_visible_owners()))
        WITH CHECK (owner_id = ANY (${s}.trellis_visible_owners()))`);
  },
};
