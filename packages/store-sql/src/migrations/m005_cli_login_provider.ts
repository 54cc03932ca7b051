import type { Knex } from 'knex';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * A CLI login remembers the provider the approving web session signed in with, so the exchange
 * hands the CLI that provider's token (SPEC §4.1). Null for logins approved by the bootstrap
 * admin and for every login made before this migration.
 */
export const cliLoginProviderMigration: TrellisMigration = {
  name: '005_cli_login_provider',
  async up(knex: Knex): Promise<void> {
    await knex.schema.alterTable('cli_logins', (t) => {
      t.text('provider');
    });
  },
};
