import type { Knex } from 'knex';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Indexes for hot queries whose cost grew with history (issue 17, "flat costs with size").
 *
 * Every heartbeat asks which of the agent's jobs were cancelled since its previous heartbeat
 * (`listCancelledForWorker`: worker, `CANCELLED`, `finished_at >= since`, oldest first). The index
 * of m001 on (claimed_by_worker_id, status) found every job the agent ever had cancelled and
 * sorted them, on each heartbeat of each agent; SQLite, which keeps no statistics, always took
 * it. With `finished_at` and `seq` after them the heartbeat reads only what is new, in order. The
 * old index is a prefix of the new one (which serves its other use, the foreign key's lookups),
 * so it goes: one index less to write on every job change.
 *
 * The other hot queries already had theirs (packages/store-sql/test/hotQueryPlans.postgres.test.ts
 * checks their plans).
 */
export const hotQueryIndexesMigration: TrellisMigration = {
  name: '023_hot_query_indexes',
  async up(knex: Knex): Promise<void> {
    await knex.raw(
      'CREATE INDEX jobs_worker_status_finished_idx ON jobs (claimed_by_worker_id, status, finished_at, seq)',
    );
    await knex.raw('DROP INDEX jobs_worker_status_idx');
  },
};
