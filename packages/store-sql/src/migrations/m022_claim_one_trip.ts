import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { APP_ROLE } from '../schema.js';
import { CLAIM_LOCK_NAMESPACE } from './m003_postgres_claim_next_job.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Adds, beside m009's `claim_next_job(worker, at, from, to)`, one that also moves the job's vine
 * (issue 17: a claim in one round trip): `claim_next_job(worker, at, from, to, vine_moves,
 * vine_kept_by)`. The job rule and the race handling are m009's (m003 explains both). The vine's
 * move comes from core's `JOB_CLAIM` like the job's: `vine_moves` maps a job type to
 * `{vine status: status it moves to}` (the vine state machine's `job_started`), and a job whose
 * trigger type is in `vine_kept_by` (a speculative plan) leaves its vine alone.
 *
 * Besides the job, now `to`, it returns the vine's status before and after the claim (null when
 * the job has no vine or leaves it alone). A vine in a status the map lacks is not moved (after =
 * before): core refuses that claim, which rolls it back. The vine's advisory lock, taken before
 * the job, already keeps other claimers off the vine; its row is locked too, against other writers.
 *
 * m009's function stays (expand, then contract: docs/operations.md "Upgrades"): a replica of the
 * previous release still calls it during a rolling upgrade. A later release drops it.
 */
export const claimOneTripMigration: TrellisMigration = {
  name: '022_claim_one_trip',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    if (dialect !== 'postgres') return;
    await knex.raw(claimFunctionSql({ replace: false, order: 'j.seq' }));
    const signature = 'claim_next_job(uuid, timestamptz, text, text, jsonb, text[])';
    await knex.raw(`REVOKE ALL ON FUNCTION ${signature} FROM PUBLIC`);
    await knex.raw(`GRANT EXECUTE ON FUNCTION ${signature} TO ${APP_ROLE}`);
  },
};

/**
 * The function's text, with the order it offers the claimable jobs in: m022 `j.seq` (creation
 * order), m055 a run's place in the queue; m057 adds the condition of an offer. `replace` redefines the function of the same signature.
 */
export function claimFunctionSql({
  replace,
  order,
  offer,
}: {
  replace: boolean;
  order: string;
  /** m057: the condition of an offer (`offerCondition`); absent: none. */
  offer?: string;
}): string {
  return `
      ${replace ? 'CREATE OR REPLACE' : 'CREATE'} FUNCTION claim_next_job(
        p_worker_id uuid, p_at timestamptz, p_from text, p_to text, p_vine_moves jsonb, p_vine_kept_by text[])
      RETURNS TABLE (claimed_job jobs, claimed_vine_before text, claimed_vine_after text)
      LANGUAGE plpgsql
      VOLATILE
      AS $$
      DECLARE
        v_owner_id uuid;
        v_candidate record;
        v_claimed jobs;
        v_vine_before text;
        v_vine_after text;
      BEGIN
        SELECT w.owner_id INTO v_owner_id FROM workers w WHERE w.id = p_worker_id;
        IF NOT FOUND THEN
          RETURN;
        END IF;

        FOR v_candidate IN
          SELECT j.id, j.vine_id, j.job_type, coalesce(j.trigger ->> 'type', 'manual') AS trigger_type
          FROM jobs j
          WHERE j.owner_id = v_owner_id
            AND j.status = p_from
            AND (j.assigned_worker_id IS NULL OR j.assigned_worker_id = p_worker_id)
            AND (j.target_worker_id IS NULL OR j.target_worker_id <> p_worker_id)${
              offer
                ? `
            AND ${offer}`
                : ''
            }
            AND (j.vine_id IS NULL OR (
              NOT EXISTS (SELECT 1 FROM jobs r WHERE r.vine_id = j.vine_id AND r.status = p_to)
              AND NOT EXISTS (SELECT 1 FROM jobs o WHERE o.vine_id = j.vine_id AND o.status = p_from AND o.seq < j.seq)))
          ORDER BY ${order}
        LOOP
          IF v_candidate.vine_id IS NOT NULL
             AND NOT pg_try_advisory_xact_lock(${CLAIM_LOCK_NAMESPACE}, hashtext(v_candidate.vine_id::text)) THEN
            CONTINUE;
          END IF;

          v_vine_before := NULL;
          v_vine_after := NULL;
          IF v_candidate.vine_id IS NOT NULL AND NOT (v_candidate.trigger_type = ANY (p_vine_kept_by)) THEN
            SELECT v.status INTO v_vine_before FROM vines v WHERE v.id = v_candidate.vine_id FOR UPDATE;
            v_vine_after := coalesce(p_vine_moves -> v_candidate.job_type ->> v_vine_before, v_vine_before);
          END IF;

          UPDATE jobs j
          SET status = p_to, claimed_by_worker_id = p_worker_id, claimed_at = p_at,
              vine_status_before = CASE WHEN v_vine_after IS DISTINCT FROM v_vine_before
                                        THEN v_vine_before ELSE j.vine_status_before END
          WHERE j.id = (
            SELECT c.id
            FROM jobs c
            WHERE c.id = v_candidate.id
              AND c.status = p_from
              AND (c.vine_id IS NULL OR (
                NOT EXISTS (SELECT 1 FROM jobs r WHERE r.vine_id = c.vine_id AND r.status = p_to)
                AND NOT EXISTS (SELECT 1 FROM jobs o WHERE o.vine_id = c.vine_id AND o.status = p_from AND o.seq < c.seq)))
            FOR UPDATE SKIP LOCKED)
          RETURNING j.* INTO v_claimed;

          IF FOUND THEN
            IF v_vine_after IS DISTINCT FROM v_vine_before THEN
              UPDATE vines v SET status = v_vine_after, status_message = NULL, updated_at = p_at
              WHERE v.id = v_candidate.vine_id;
            END IF;
            claimed_job := v_claimed;
            claimed_vine_before := v_vine_before;
            claimed_vine_after := v_vine_after;
            RETURN NEXT;
            RETURN;
          END IF;
        END LOOP;
      END
      $$`;
}
