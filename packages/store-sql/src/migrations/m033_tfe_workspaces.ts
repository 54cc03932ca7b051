import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * The Terraform Cloud protocol, part 1 (issue 26): a vine is a workspace of the stock CLI.
 *
 * `vines` gains the workspace's `tags` (a JSON list of names, the CLI's `tags` strategy),
 * `terraform_version` (whatever version string the CLI sets, else `latest`) and `execution_mode`
 * (`remote` or `local`). Every existing vine reads as a remote workspace with no tags.
 *
 * `state_versions` gains `created_by` (the person whose token wrote a version through the cloud
 * block or an upload; null for a job's engine) and `upload_id`, the id a version created ahead of
 * its bytes (`hosted-state-upload-url`) is read by once its bytes arrive.
 *
 * Additive: a replica of the previous release neither reads nor writes the new columns, and
 * their defaults are what it means.
 */
export const tfeWorkspacesMigration: TrellisMigration = {
  name: '033_tfe_workspaces',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const isPostgres = dialect === 'postgres';
    await knex.schema.alterTable('vines', (t) => {
      t.specificType('tags', isPostgres ? 'jsonb' : 'text')
        .notNullable()
        .defaultTo('[]');
      t.text('terraform_version').notNullable().defaultTo('latest');
      t.text('execution_mode').notNullable().defaultTo('remote');
    });
    await knex.schema.alterTable('state_versions', (t) => {
      t.uuid('created_by');
      t.text('upload_id');
    });
    await knex.schema.alterTable('state_versions', (t) => {
      t.unique(['upload_id'], { indexName: 'state_versions_upload_id_unique' });
    });
  },
};
