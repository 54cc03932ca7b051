import type { JobClaimMove, JobTrigger, VineJobType, VineStatus } from '@trellis/core';
import { CLAIM_ORDER } from '../claimOrder.js';
import { offerCondition } from '../../migrations/m057_deploy_offer.js';
import { jsonOut, type Row, textOut } from '../../rows.js';
import type { ClaimedRows, SqlSession } from '../Dialect.js';
import { scopeOwner } from '../scoping.js';

/**
 * SQLite's claim: the rule of `claim_next_job` (migrations/m022_claim_one_trip.ts; m003 explains
 * it; m055 its order; m057 its offers) as one SELECT and conditional UPDATEs, with the moves of core's `JOB_CLAIM` (the job's and
 * its vine's). The unit of work began with BEGIN IMMEDIATE, so it holds the database's write
 * lock: no other claim can run between them. Statements here are calls into the same process,
 * not round trips, so the reads of the answer stay separate.
 */
const NEXT_CLAIMABLE_JOB = `
  SELECT j.id, j.vine_id, j.job_type, j."trigger", v.status AS vine_status
  FROM jobs j
  LEFT JOIN vines v ON v.id = j.vine_id
  WHERE j.owner_id = (SELECT w.owner_id FROM workers w WHERE w.id = :worker AND w.owner_id = coalesce(:scope, w.owner_id))
    AND j.status = :from
    AND (j.assigned_worker_id IS NULL OR j.assigned_worker_id = :worker)
    AND (j.target_worker_id IS NULL OR j.target_worker_id <> :worker)
    AND ${offerCondition(':worker', ':at')}
    AND (j.vine_id IS NULL OR (
      NOT EXISTS (SELECT 1 FROM jobs r WHERE r.vine_id = j.vine_id AND r.status = :to)
      AND NOT EXISTS (SELECT 1 FROM jobs o WHERE o.vine_id = j.vine_id AND o.status = :from AND o.seq < j.seq)))
  ORDER BY ${CLAIM_ORDER}
  LIMIT 1`;

export async function claimNextSqliteJob(
  session: SqlSession,
  workerId: string,
  at: string,
  move: JobClaimMove,
): Promise<ClaimedRows | undefined> {
  // In owner scope only a worker of that owner counts, as row-level security makes it on Postgres.
  const [candidate] = await session.raw(NEXT_CLAIMABLE_JOB, {
    worker: workerId,
    scope: scopeOwner(session.scope),
    from: move.from,
    to: move.to,
    at,
  });
  if (!candidate) return undefined;
  const vine = vineMoveOf(candidate, move);
  const moved = vine !== null && vine.after !== vine.before;
  const [job] = await session
    .table('jobs')
    .where({ id: candidate.id, status: move.from })
    .update({
      status: move.to,
      claimed_by_worker_id: workerId,
      claimed_at: at,
      ...(moved ? { vine_status_before: vine.before } : {}),
    })
    .returning('*');
  if (!job) return undefined;
  if (moved) {
    await session
      .table('vines')
      .where({ id: candidate.vine_id })
      .update({ status: vine.after, status_message: null, updated_at: at });
  }
  const [snapshot, cloudIdentity, vineyard] = await Promise.all([
    session.table('config_snapshots').where({ owner_id: job.owner_id, config_hash: job.config_hash }).first(),
    job.cloud_identity_id === null
      ? null
      : session.table('cloud_identities').where({ id: job.cloud_identity_id }).first(),
    job.vineyard_id === null ? null : session.table('vineyards').where({ id: job.vineyard_id }).first(),
  ]);
  return { job, snapshot: snapshot?.snapshot, vine, cloudIdentity: cloudIdentity ?? null, vineyard: vineyard ?? null };
}

/** The vine's move as m022 makes it: none without a vine or for a trigger that keeps it. */
function vineMoveOf(candidate: Row, move: JobClaimMove): { before: string; after: string } | null {
  if (candidate.vine_status === null || candidate.vine_status === undefined) return null;
  const trigger = candidate.trigger === null ? null : jsonOut<{ type: JobTrigger['type'] }>(candidate.trigger);
  if (move.vineKeptBy.includes(trigger?.type ?? 'manual')) return null;
  const before = textOut(candidate.vine_status) as VineStatus;
  const moves = move.vine[candidate.job_type as VineJobType] ?? {};
  return { before, after: moves[before] ?? before };
}
