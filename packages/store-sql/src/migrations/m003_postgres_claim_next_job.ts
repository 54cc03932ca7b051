import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { APP_ROLE } from '../schema.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Namespace of the per-vine advisory locks taken by `claim_next_job` (the first key of
 * `pg_try_advisory_xact_lock(int, int)`; the second is the hash of the vine id).
 */
export const CLAIM_LOCK_NAMESPACE = 0x7472_6c73; // "trls"

/**
 * `claim_next_job(worker, at)` (SPEC §4.2 rule 1, DESIGN §3). It runs as the caller (under
 * row-level security when the unit of work is owner-scoped) and returns the claimed row, now
 * `PROCESSING`, or no row. The rule, which SQLite's claim repeats (dialects/sqlite/sqliteClaim.ts):
 *
 * - the job is `QUEUED` and belongs to the worker's owner;
 * - it is assigned to nobody or to this worker;
 * - it does not target this worker (a worker never runs its own DESTROY_WORKER);
 * - if it has a vine: no job of the vine is `PROCESSING` and it is the vine's oldest `QUEUED` job
 *   (FIFO per vine, even when that older job is one this worker may not run);
 * - among those, the oldest (lowest `seq`) wins.
 *
 * The race it must win: two claimers can pick two different jobs of one vine if each reads the
 * vine before the other's claim commits (for instance right after the vine's running job ended).
 * So a claimer first takes the vine's advisory lock (skipping vines another claimer holds), then
 * re-checks the rule in a fresh statement, which under READ COMMITTED sees every claim committed
 * before the lock was granted, and only then takes the row with FOR UPDATE SKIP LOCKED. The lock
 * is held until the claiming transaction ends, so the next claimer of the vine sees its claim.
 */
export const postgresClaimNextJobMigration: TrellisMigration = {
  name: '003_postgres_claim_next_job',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    if (dialect !== 'postgres') return;
    await knex.raw(`
      CREATE OR REPLACE FUNCTION claim_next_job(p_worker_id uuid, p_at timestamptz)
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
            AND j.status = 'QUEUED'
            AND (j.assigned_worker_id IS NULL OR j.assigned_worker_id = p_worker_id)
            AND (j.target_worker_id IS NULL OR j.target_worker_id <> p_worker_id)
            AND (j.vine_id IS NULL OR (
              NOT EXISTS (SELECT 1 FROM jobs r WHERE r.vine_id = j.vine_id AND r.status = 'PROCESSING')
              AND NOT EXISTS (SELECT 1 FROM jobs o WHERE o.vine_id = j.vine_id AND o.status = 'QUEUED' AND o.seq < j.seq)))
          ORDER BY j.seq
        LOOP
          IF v_candidate.vine_id IS NOT NULL
             AND NOT pg_try_advisory_xact_lock(${CLAIM_LOCK_NAMESPACE}, hashtext(v_candidate.vine_id::text)) THEN
            CONTINUE;
          END IF;

          UPDATE jobs j
          SET status = 'PROCESSING', claimed_by_worker_id = p_worker_id, claimed_at = p_at
          WHERE j.id = (
            SELECT c.id
            FROM jobs c
            WHERE c.id = v_candidate.id
              AND c.status = 'QUEUED'
              AND (c.vine_id IS NULL OR (
                NOT EXISTS (SELECT 1 FROM jobs r WHERE r.vine_id = c.vine_id AND r.status = 'PROCESSING')
                AND NOT EXISTS (SELECT 1 FROM jobs o WHERE o.vine_id = c.vine_id AND o.status = 'QUEUED' AND o.seq < c.seq)))
            FOR UPDATE SKIP LOCKED)
          RETURNING j.* INTO v_claimed;

          IF FOUND THEN
            RETURN NEXT v_claimed;
            RETURN;
          END IF;
        END LOOP;
      END
      $$`);
    await knex.raw(`REVOKE ALL ON FUNCTION claim_next_job(uuid, timestamptz) FROM PUBLIC`);
    await knex.raw(`GRANT EXECUTE ON FUNCTION claim_next_job(uuid, timestamptz) TO ${APP_ROLE}`);
  },
};
