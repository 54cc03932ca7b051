import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * `tofu login` (issue 26): the authorization codes of the OAuth code grant with PKCE. A code is
 * made when a signed-in person approves the consent page and redeemed once, within minutes, by
 * the CLI's token request, which precedes any owner: system records, owned by nobody. On
 * Postgres the application role gets no grant (only system work, as the connecting role, reads
 * them). Only the SHA-256 of a code is kept.
 */
export const tfeLoginCodesMigration: TrellisMigration = {
  name: '034_tfe_login_codes',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const isPostgres = dialect === 'postgres';
    const time = (table: Knex.CreateTableBuilder, name: string) =>
      table.specificType(name, isPostgres ? 'timestamptz' : 'text');
    await knex.schema.createTable('tfe_authorization_codes', (t) => {
      t.text('code_hash').primary();
      t.uuid('user_id').notNullable().references('id').inTable('users');
      t.text('client_id').notNullable();
      t.text('redirect_uri').notNullable();
      t.text('code_challenge').notNullable();
      time(t, 'created_at').notNullable();
      time(t, 'expires_at').notNullable();
      time(t, 'consumed_at');
      t.index(['expires_at'], 'tfe_authorization_codes_expiry_idx');
    });
  },
};
