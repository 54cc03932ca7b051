import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * The other settings of a Terraform Cloud workspace (issue 26: description, auto-apply, working
 * directory, trigger prefixes, …), one JSON object per vine holding only those that differ from
 * the defaults (`DEFAULT_WORKSPACE_SETTINGS`). Null, every existing vine's value, means all
 * defaults. Additive: a replica of the previous release neither reads nor writes it.
 */
export const workspaceSettingsMigration: TrellisMigration = {
  name: '043_workspace_settings',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    await knex.schema.alterTable('vines', (t) => {
      t.specificType('workspace_settings', dialect === 'postgres' ? 'jsonb' : 'text');
    });
  },
};
