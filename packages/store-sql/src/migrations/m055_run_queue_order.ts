import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { claimFunctionSql } from './m022_claim_one_trip.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * The order claims offer queued jobs in (issue 31): a run keeps its place in the queue. A DEPLOY
 * (or DESTROY) of a plan is offered at its plan's place, not behind every job queued while the
 * plan ran, so plan end → apply start is the next claim rather than the end of the queue; other
 * jobs keep creation order. Jobs of one vine still go one at a time in creation order (the rule
 * m009 and m022 keep). SQLite's claim reads the same expression (`sqliteClaim.ts`).
 */
export const RUN_QUEUE_ORDER = 'coalesce((SELECT p.seq FROM jobs p WHERE p.id = j.plan_job_id), j.seq), j.seq';

/**
 * Redefines m022's `claim_next_job(worker, at, from, to, vine_moves, vine_kept_by)` with that
 * order: same signature and answer, so a replica of the previous release calls it unchanged
 * during a rolling upgrade. SQLite needs nothing (its claim is a statement of the release).
 */
export const runQueueOrderMigration: TrellisMigration = {
  name: '055_run_queue_order',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    if (dialect !== 'postgres') return;
    await knex.raw(claimFunctionSql({ replace: true, order: RUN_QUEUE_ORDER }));
  },
};
