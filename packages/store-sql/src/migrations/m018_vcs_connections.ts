import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { APP_ROLE } from '../schema.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Git-driven runs (issue 13): `vcs_connections`, one per connected vine (deleted with it), owned
 * by the vine's owner with the row-level security of every owned table (m010); and
 * `vcs_deliveries`, the webhook delivery ids already handled, which belong to nobody (a webhook is
 * matched to its owners only after its signature is checked) and are written by system work.
 */
export const vcsConnectionsMigration: TrellisMigration = {
  name: '018_vcs_connections',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const isPostgres = dialect === 'postgres';
    const time = (table: Knex.CreateTableBuilder, name: string) =>
      table.specificType(name, isPostgres ? 'timestamptz' : 'text');
    await knex.schema.createTable('vcs_connections', (t) => {
      t.uuid('vine_id').primary().references('id').inTable('vines').onDelete('CASCADE');
      t.uuid('owner_id').notNullable();
      t.text('provider').notNullable();
      t.text('repository').notNullable();
      /** Lower-cased, for the webhook's lookup (providers spell names case-insensitively). */
      t.text('repository_key').notNullable();
      t.text('branch').notNullable();
      t.text('paths').notNullable();
      t.boolean('auto_deploy').notNullable();
      t.boolean('pull_requests').notNullable();
      t.text('webhook_mode').notNullable();
      t.text('hook_id');
      t.text('webhook_secret_sealed').notNullable();
      t.uuid('connected_by').notNullable();
      time(t, 'created_at').notNullable();
      time(t, 'updated_at').notNullable();
      t.check(`provider IN ('github', 'gitlab', 'bitbucket')`, [], 'vcs_connections_provider_check');
      t.check(`webhook_mode IN ('auto', 'manual')`, [], 'vcs_connections_webhook_mode_check');
      t.index(['provider', 'repository_key'], 'vcs_connections_repository_idx');
      t.index(['owner_id'], 'vcs_connections_owner_idx');
    });
    await knex.schema.createTable('vcs_deliveries', (t) => {
      t.text('provider').notNullable();
      t.text('delivery_id').notNullable();
      time(t, 'received_at').notNullable();
      t.primary(['provider', 'delivery_id'], 'vcs_deliveries_pkey');
      t.index(['received_at'], 'vcs_deliveries_received_idx');
    });
    if (!isPostgres) return;

    const [current] = (await knex.raw('SELECT current_schema() AS schema')).rows as { schema: string }[];
    if (!current) throw new Error('m018: no current schema');
    const s = `"${current.schema.replaceAll('"', '""')}"`;
    await knex.raw(`GRANT SELECT, INSERT, UPDATE, DELETE ON vcs_connections TO ${APP_ROLE}`);
    await knex.raw('ALTER TABLE vcs_connections ENABLE ROW LEVEL SECURITY');
    await knex.raw(`
      CREATE POLICY vcs_connections_visible_owners ON vcs_connections TO ${APP_ROLE}
        USING (owner_id = ANY (${s}.trellis_visible_owners()))
        WITH CHECK (owner_id = ANY (${s}.trellis_visible_owners()))`);
    // vcs_deliveries: system work only; the application role gets no grant.
  },
};
