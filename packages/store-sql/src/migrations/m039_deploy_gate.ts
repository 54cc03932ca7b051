import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * The deploy gate (issue 23).
 * - `jobs.claimed_policies`: the policy versions a job's claim carried to its agent
 *   (`[{policy_id, version, name, enforcement}]`), JSON, recorded at claim time; null: not claimed
 *   (or claimed before this migration). A plan without a result for each is `policy_unchecked`.
 * - `jobs.caused_by`: of a job the system queued (a run trigger's plan, a push's plan, an
 *   auto-deploy), the person whose action caused it; null: none known. The separate-approver rule
 *   counts them as its creator.
 * No new table: the jobs rows keep their row-level security and grants.
 */
export const deployGateMigration: TrellisMigration = {
  name: '039_deploy_gate',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    await knex.schema.alterTable('jobs', (t) => {
      t.specificType('claimed_policies', dialect === 'postgres' ? 'jsonb' : 'text');
      t.uuid('caused_by');
    });
  },
};
