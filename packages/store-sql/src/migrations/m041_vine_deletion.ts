import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Deleting vines and vineyards (issue 25). A deleted vine keeps its row, so its jobs keep their
 * history, and its state versions until `purge_after` (the retention setting); a deleted vineyard
 * keeps its row for the same jobs. Both are gone from every read, and their names are free again:
 * the name keys become partial unique indexes over the rows not deleted (same names, so a
 * duplicate is still reported as `vine_name_taken`, `project_name_taken` or `vineyard_name_taken`).
 *
 * Additive for a replica of the previous release: it never deletes, so every row it sees has
 * `deleted_at` null and the keys refuse what they refused before.
 */
export const vineDeletionMigration: TrellisMigration = {
  name: '041_vine_deletion',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const isPostgres = dialect === 'postgres';
    const time = (table: Knex.AlterTableBuilder, name: string) =>
      table.specificType(name, isPostgres ? 'timestamptz' : 'text');
    await knex.schema.alterTable('vines', (t) => {
      time(t, 'deleted_at');
      time(t, 'purge_after');
    });
    await knex.schema.alterTable('vineyards', (t) => {
      time(t, 'deleted_at');
    });
    const keys = [
      { table: 'vines', name: 'vines_owner_name_unique', columns: 'owner_id, name' },
      { table: 'vines', name: 'vines_owner_project_name_unique', columns: 'owner_id, project_name' },
      { table: 'vineyards', name: 'vineyards_owner_name_unique', columns: 'owner_id, name' },
    ];
    for (const key of keys) {
      await knex.raw(isPostgres ? `ALTER TABLE ${key.table} DROP CONSTRAINT ${key.name}` : `DROP INDEX ${key.name}`);
      await knex.raw(`CREATE UNIQUE INDEX ${key.name} ON ${key.table} (${key.columns}) WHERE deleted_at IS NULL`);
    }
    await knex.raw('CREATE INDEX vines_purge_after_idx ON vines (purge_after) WHERE purge_after IS NOT NULL');
  },
};
