import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * The provider mirror's pull-through (issue 28): an archive is `pushed` (by `trellis mirror push`,
 * every row before this) or `pulled` by the server from the provider's origin registry. The
 * table keeps its row-level policy (m050). Additive: a replica of the previous release neither
 * reads nor writes the column, and its inserts get the default.
 */
export const mirrorPullThroughMigration: TrellisMigration = {
  name: '053_mirror_pull_through',
  async up(knex: Knex, _dialect: DialectName): Promise<void> {
    await knex.schema.alterTable('mirror_archives', (t) => {
      t.text('origin').notNullable().defaultTo('pushed');
    });
  },
};
