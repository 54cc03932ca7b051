import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { APP_ROLE } from '../schema.js';
import { CLAIM_LOCK_NAMESPACE } from './m003_postgres_claim_next_job.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Replaces `claim_next_job(worker, at)` of m003 by `claim_next_job(worker, at, from, to)`: the same
 * rule and the same race handling (m003 explains both), but the statuses of the claim are
 * parameters, passed from core's `JOB_CLAIM` (the job state machine's `claim` move), so the move
 * is written in core alone. `from` is the status of a claimable job, `to` the status it moves to,
 * which is also the status of a vine's running job.
 */
export const claimRulesMigration: TrellisMigration = {
  name: '009_claim_rules',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    if (dialect !== 'postgres') return;
    await knex.raw(`
      CREATE FUNCTION claim_next_job(p_worker_id uuid, p_at timestamptz, p_from text, p_to text)
      RETURNS SETOF jobs
      LANGUAGE plpgsql
      VOLATILE
      AS $$
      DECLARE
        v_owner_id uuid;
        v_candidate record;
        v_claimed jobs;
      BEGIN
        SELECT w.owner_id INTO v_owner_id FROM workers w WHERE w.id = p_worker_id;
        IF NOT FOUND THEN
          RETURN;
        END IF;

        FOR v_candidate IN
          SELECT j.id, j.vine_id
          FROM jobs j
          WHERE j.owner_id = v_owner_id
            AND j.status = p_from
            AND (j.assigned_worker_id IS NULL OR j.assigned_worker_id = p_worker_id)
            AND (j.target_worker_id IS NULL OR j.target_worker_id <> p_worker_id)
            AND (j.vine_id IS NULL OR (
              NOT EXISTS (SELECT 1 FROM jobs r WHERE r.vine_id = j.vine_id AND r.status = p_to)
              AND NOT EXISTS (SELECT 1 FROM jobs o WHERE o.vine_id = j.vine_id AND o.status = p_from AND o.seq < j.seq)))
          ORDER BY j.seq
        LOOP
          IF v_candidate.vine_id IS NOT NULL
             AND NOT pg_try_advisory_xact_lock(${CLAIM_LOCK_NAMESPACE}, hashtext(v_candidate.vine_id::text)) THEN
            CONTINUE;
          END IF;

          UPDATE jobs j
          SET status = p_to, claimed_by_worker_id = p_worker_id, claimed_at = p_at
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
            RETURN NEXT v_claimed;
            RETURN;
          END IF;
        END LOOP;
      END
      $$`);
    await knex.raw(`REVOKE ALL ON FUNCTION claim_next_job(uuid, timestamptz, text, text) FROM PUBLIC`);
    await knex.raw(`GRANT EXECUTE ON FUNCTION claim_next_job(uuid, timestamptz, text, text) TO ${APP_ROLE}`);
    await knex.raw(`DROP FUNCTION claim_next_job(uuid, timestamptz)`);
  },
};
