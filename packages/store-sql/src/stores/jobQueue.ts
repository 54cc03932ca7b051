import type { Knex } from 'knex';
import { CLAIM_ORDER } from '../dialects/claimOrder.js';

/**
 * The owners' queued jobs, each with its `queue_position` (issue 29, `JobStore.queue`): the
 * order their claims take them in, in one statement both dialects run.
 *
 * The claim (`claimOrder.ts`, m022) takes, of the jobs that are the oldest queued job of their
 * vine, the first by `CLAIM_ORDER`. So a queue drained claim by claim comes out as follows:
 * `queue_place` ranks the owner's queued jobs by `CLAIM_ORDER` itself; a job cannot go before the
 * jobs of its vine queued earlier, so its turn is the latest place among them and its own (a
 * running maximum over its vine in insertion order); the queue is the jobs by turn, a vine's jobs
 * in insertion order. (Taking the first vine head by place, again and again, gives exactly that
 * order: a head with place p is followed at once by the next jobs of its vine with places below
 * p, which no other head can beat.) A job without a vine is a vine of its own.
 *
 * `queued` is the owners' queued jobs rows, as the unit of work's scope narrows them; it is read
 * as the row `j` that `CLAIM_ORDER` speaks of.
 */
export function queuePositionsSql(queued: Knex.QueryBuilder): { sql: string; bindings: readonly Knex.RawBinding[] } {
  const inner = queued.toSQL();
  const sql = `
    SELECT held.*, row_number() OVER (PARTITION BY held.owner_id ORDER BY held.queue_turn, held.seq) AS queue_position
    FROM (
      SELECT placed.*, max(placed.queue_place) OVER (
          PARTITION BY placed.owner_id, coalesce(placed.vine_id, placed.id)
          ORDER BY placed.seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS queue_turn
      FROM (
        SELECT j.*, row_number() OVER (PARTITION BY j.owner_id ORDER BY ${CLAIM_ORDER}) AS queue_place
        FROM (${inner.sql}) j
      ) placed
    ) held`;
  return { sql, bindings: inner.bindings as readonly Knex.RawBinding[] };
}
