import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * One-time sign-in links (`trellis-server users invite EMAIL`): the SHA-256 of each link's token,
 * the person it signs in, when it expires and when it was used. System records, owned by nobody:
 * on Postgres the application role gets no grant (only system work, as the connecting role, reads
 * them), like `signing_keys`.
 */
export const signInLinksMigration: TrellisMigration = {
  name: '038_sign_in_links',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const time = (table: Knex.CreateTableBuilder, name: string) =>
      table.specificType(name, dialect === 'postgres' ? 'timestamptz' : 'text');
    await knex.schema.createTable('sign_in_links', (t) => {
      t.text('token_hash').primary();
      t.text('email').notNullable();
      t.text('name');
      time(t, 'created_at').notNullable();
      time(t, 'expires_at').notNullable();
      time(t, 'used_at');
      t.index(['expires_at'], 'sign_in_links_expires_idx');
    });
  },
};
