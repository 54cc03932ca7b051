import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Approvals and overrides of plans (issue 15).
 * - `jobs.created_by`: the person who queued the job (null: the system, or a row from before this
 *   migration); a configuration with a separate approver refuses that person's approval.
 * - `jobs.approval` (a plan's approval or rejection: who, when, comment) and `jobs.policy_override`
 *   (an admin's override of its failed mandatory policies: who, when, reason), JSON, null: none.
 * - `vines.approval`: the approval setting (`{required, separate_approver}`), JSON, null: none.
 * No new table: the jobs and vines rows keep their row-level security and grants.
 */
export const planReviewsMigration: TrellisMigration = {
  name: '016_plan_reviews',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const json = (table: Knex.AlterTableBuilder, name: string) =>
      table.specificType(name, dialect === 'postgres' ? 'jsonb' : 'text');
    await knex.schema.alterTable('jobs', (t) => {
      t.uuid('created_by');
      json(t, 'approval');
      json(t, 'policy_override');
    });
    await knex.schema.alterTable('vines', (t) => {
      json(t, 'approval');
    });
  },
};
