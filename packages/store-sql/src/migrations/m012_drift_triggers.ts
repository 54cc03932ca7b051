import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Drift detection and run triggers (issue 14).
 * - `jobs.trigger`: why a job was queued (`{type:"manual"|"drift"|"upstream", ...}`); rows from
 *   before this migration are null and read as `{type:"manual"}`.
 * - `vines.drift_interval_minutes` (null: no schedule), `vines.next_drift_check_at` (what the
 *   scheduler takes, indexed), `vines.drift` (the last check's result) and `vines.triggers_after`
 *   (a JSON list of the upstream vine ids).
 * No new table: the vines and jobs rows keep their row-level security and grants.
 */
export const driftTriggersMigration: TrellisMigration = {
  name: '012_drift_triggers',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const isPostgres = dialect === 'postgres';
    const json = (table: Knex.AlterTableBuilder, name: string) =>
      table.specificType(name, isPostgres ? 'jsonb' : 'text');
    const time = (table: Knex.AlterTableBuilder, name: string) =>
      table.specificType(name, isPostgres ? 'timestamptz' : 'text');
    await knex.schema.alterTable('jobs', (t) => {
      json(t, 'trigger');
    });
    await knex.schema.alterTable('vines', (t) => {
      t.integer('drift_interval_minutes');
      time(t, 'next_drift_check_at');
      json(t, 'drift');
      json(t, 'triggers_after');
    });
    await knex.schema.alterTable('vines', (t) => {
      t.index(['next_drift_check_at'], 'vines_next_drift_check_idx', {
        predicate: knex.whereNotNull('next_drift_check_at'),
      });
    });
  },
};
