/**
 * The order the claim offers queued jobs in, as an `ORDER BY` list over the jobs row `j`: the one
 * statement of it. Postgres's `claim_next_job` was defined with it (m055), SQLite's claim reads
 * it (`sqlite/sqliteClaim.ts`), and so does the queue (`stores/jobQueue.ts`, issue 29), whose
 * positions are the claims' order. A new order is a migration redefining the function with a new
 * constant, and this line naming that one. Which jobs a claim may take at all is the claim's
 * condition, not its order: a job offered to another agent (issue 31) is passed over until its
 * offer ends, by `offerCondition` (m057), which both claims embed; the order stays this one.
 */
export { RUN_QUEUE_ORDER as CLAIM_ORDER } from '../migrations/m055_run_queue_order.js';
