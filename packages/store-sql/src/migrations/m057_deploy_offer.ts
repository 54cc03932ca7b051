import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { claimFunctionSql } from './m022_claim_one_trip.js';
import { RUN_QUEUE_ORDER } from './m055_run_queue_order.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * The claim's condition of an offer, over the jobs row `j`, the claiming worker and the claim's
 * time as named parameters of the statement that embeds it: a job offered to another agent
 * (`offered_worker_id`) is passed over until `offered_until`; a job assigned to an agent keeps
 * only that rule. SQLite's claim and Postgres's function embed the same text.
 */
export function offerCondition(worker: string, at: string): string {
  return `(j.offered_worker_id IS NULL OR j.assigned_worker_id IS NOT NULL OR j.offered_worker_id = ${worker} OR j.offered_until <= ${at})`;
}

/**
 * A DEPLOY of a plan offered to the agent that ran the plan (issue 31; core's `JobOffer` and
 * `DEPLOY_OFFER_MS` say why and for how long): two nullable columns on `jobs`, written only for
 * such a job, and Postgres's `claim_next_job` redefined to pass over a job offered to another
 * agent until its time. Same signature and answer as m055's, so a replica of the previous release
 * calls it unchanged during a rolling upgrade; that replica writes no offer, and its jobs are
 * claimed as before. The claim order (`CLAIM_ORDER`) does not change.
 */
export const deployOfferMigration: TrellisMigration = {
  name: '057_deploy_offer',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    await knex.schema.alterTable('jobs', (t) => {
      t.uuid('offered_worker_id');
      t.specificType('offered_until', dialect === 'postgres' ? 'timestamptz' : 'text');
    });
    if (dialect !== 'postgres') return;
    await knex.raw(
      claimFunctionSql({ replace: true, order: RUN_QUEUE_ORDER, offer: offerCondition('p_worker_id', 'p_at') }),
    );
  },
};
