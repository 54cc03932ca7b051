import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Fenced, never-lost state (issue 30): a state version written by the engine of a job the
 * control plane had failed as lost is `after_lost` (a person reviews it: `reviewed_at`,
 * `reviewed_by`), and `rejected` when a later job had the vine by then (kept for recovery, never
 * the current state). Additive: a replica of the previous release neither reads nor writes them.
 */
export const stateAfterLostMigration: TrellisMigration = {
  name: '052_state_after_lost',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    await knex.schema.alterTable('state_versions', (t) => {
      t.boolean('rejected').notNullable().defaultTo(false);
      t.boolean('after_lost').notNullable().defaultTo(false);
      t.specificType('reviewed_at', dialect === 'postgres' ? 'timestamptz' : 'text');
      t.uuid('reviewed_by');
    });
  },
};
