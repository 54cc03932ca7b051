import type { JobClaimMove } from '@trellis/core';
import type { Row } from '../../rows.js';
import type { SqlSession } from '../Dialect.js';
import { scopeOwner } from '../scoping.js';

/**
 * SQLite's claim: the rule of `claim_next_job` (migrations/m009_claim_rules.ts; m003 explains
 * it) as one SELECT and a conditional UPDATE, with the statuses of core's `JOB_CLAIM`. The unit
 * of work began with BEGIN IMMEDIATE, so it holds the database's write lock: no other claim can
 * run between the two.
 */
const NEXT_CLAIMABLE_JOB = `
  SELECT j.id
  FROM jobs j
  WHERE j.owner_id = (SELECT w.owner_id FROM workers w WHERE w.id = :worker AND w.owner_id = coalesce(:scope, w.owner_id))
    AND j.status = :from
    AND (j.assigned_worker_id IS NULL OR j.assigned_worker_id = :worker)
    AND (j.target_worker_id IS NULL OR j.target_worker_id <> :worker)
    AND (j.vine_id IS NULL OR (
      NOT EXISTS (SELECT 1 FROM jobs r WHERE r.vine_id = j.vine_id AND r.status = :to)
      AND NOT EXISTS (SELECT 1 FROM jobs o WHERE o.vine_id = j.vine_id AND o.status = :from AND o.seq < j.seq)))
  ORDER BY j.seq
  LIMIT 1`;

export async function claimNextSqliteJob(
  session: SqlSession,
  workerId: string,
  at: string,
  move: JobClaimMove,
): Promise<Row | undefined> {
  // In owner scope only a worker of that owner counts, as row-level security makes it on Postgres.
  const [candidate] = await session.raw(NEXT_CLAIMABLE_JOB, {
    worker: workerId,
    scope: scopeOwner(session.scope),
    from: move.from,
    to: move.to,
  });
  if (!candidate) return undefined;
  const [claimed] = await session
    .table('jobs')
    .where({ id: candidate.id, status: move.from })
    .update({ status: move.to, claimed_by_worker_id: workerId, claimed_at: at })
    .returning('*');
  return claimed;
}
