import {
  type JobTrigger,
  type JsonObject,
  type PolicyResult,
  planPolicyResultOf,
  SPECULATIVE_TRIGGER_TYPES,
} from '@trellis/core';
import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { jsonOut } from '../rows.js';
import type { TrellisMigration } from './TrellisMigration.js';

const BATCH = 1000;

/**
 * The fleet (issue 29) filters and counts vines by their drift's status (`vines.drift_status`,
 * generated from `drift`) and by the policy result of their latest plan:
 * `vines.plan_policy` (`passed` or `failed`; null: no policy, or no plan), written by the
 * `fleet.planPolicy` hook when a deployable PLAN succeeds, so the fleet never reads a job. Filled
 * here from each vine's latest successful PLAN that was not a drift check or a pull request's.
 * The fleet's pages filtered by status read a new index by (owner_id, deleted_at, status,
 * created_at, seq), which also holds what the counts group by, so they read the index alone
 * unless a tag is asked for; unfiltered pages read m001's (owner_id, created_at, seq).
 * Additive: a replica of the previous release neither reads nor writes the column (a plan that
 * ends on one during a rolling upgrade leaves its vine's result as it was until the next plan).
 */
export const fleetMigration: TrellisMigration = {
  name: '056_fleet',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    await knex.schema.alterTable('vines', (t) => {
      t.text('plan_policy');
    });
    // The drift's status, computed by the database from `drift` (so a replica of the previous
    // release, which writes only `drift`, keeps it true): SQLite computes it when read, Postgres
    // stores it.
    await knex.raw(
      dialect === 'postgres'
        ? `ALTER TABLE vines ADD COLUMN drift_status text GENERATED ALWAYS AS (drift ->> 'status') STORED`
        : `ALTER TABLE vines ADD COLUMN drift_status TEXT GENERATED ALWAYS AS (json_extract(drift, '$.status')) VIRTUAL`,
    );
    // Pages filtered by status read it in order; the counts read only it: every column they group
    // or filter by is in it (`deleted_at` too), so the rows with their sources and variables stay
    // unread. Tags and the drift's JSON stay out: an index entry has a size limit (Postgres:
    // 2,712 bytes), and a tag filter reads the rows.
    await knex.schema.alterTable('vines', (t) => {
      t.index(
        ['owner_id', 'deleted_at', 'status', 'created_at', 'seq', 'plan_policy', 'updated_at', 'drift_status'],
        'vines_fleet_idx',
      );
    });
    const text = dialect === 'postgres' ? 'execution_metadata::text' : 'execution_metadata';
    // Plans in insertion order, so each vine ends with its latest one's result.
    const latest = new Map<string, 'passed' | 'failed' | null>();
    let after = 0;
    for (;;) {
      const rows: { seq: number | string; vine_id: string; trigger: unknown; metadata: string | null }[] = await knex(
        'jobs',
      )
        .select(
          'seq',
          'vine_id',
          'trigger',
          knex.raw(`CASE WHEN ${text} LIKE '%"policy_results"%' THEN ${text} END AS metadata`),
        )
        .where('seq', '>', after)
        .where({ job_type: 'PLAN', status: 'SUCCESS' })
        .whereNotNull('vine_id')
        .orderBy('seq')
        .limit(BATCH);
      for (const row of rows) {
        const trigger = row.trigger === null || row.trigger === undefined ? null : jsonOut<JobTrigger>(row.trigger);
        if (trigger !== null && SPECULATIVE_TRIGGER_TYPES.includes(trigger.type)) continue;
        const results =
          row.metadata === null
            ? undefined
            : (jsonOut<JsonObject>(row.metadata).policy_results as PolicyResult[] | undefined);
        const result = planPolicyResultOf(Array.isArray(results) ? results : undefined);
        latest.set(String(row.vine_id), result === 'none' ? null : result);
      }
      if (rows.length < BATCH) break;
      after = Number(rows[rows.length - 1]?.seq);
    }
    for (const result of ['passed', 'failed'] as const) {
      const ids = [...latest].filter(([, value]) => value === result).map(([id]) => id);
      for (let start = 0; start < ids.length; start += BATCH) {
        await knex('vines')
          .whereIn('id', ids.slice(start, start + BATCH))
          .update({ plan_policy: result });
      }
    }
  },
};
