import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Caps and retention: each job counts the bytes of its log (so the per-job cap is one read, not a
 * SUM over its chunks) and records that its log was cut; finished jobs that still hold log bytes
 * are found by `finished_at` (a partial index, so jobs whose logs are already gone cost nothing)
 * when their logs pass retention. Existing logs are counted once here.
 */
export const capsRetentionMigration: TrellisMigration = {
  name: '007_caps_retention',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    await knex.schema.alterTable('jobs', (t) => {
      t.bigInteger('log_bytes').notNullable().defaultTo(0);
      t.boolean('log_cut').notNullable().defaultTo(false);
      t.index(['finished_at'], 'jobs_finished_at_idx');
    });
    await knex.schema.alterTable('jobs', (t) => {
      t.index(['finished_at'], 'jobs_log_retention_idx', { predicate: knex.whereRaw('log_bytes > 0') });
    });
    const bytes = dialect === 'postgres' ? 'octet_length(log_chunk)' : 'length(CAST(log_chunk AS BLOB))';
    await knex.raw(`
      UPDATE jobs SET log_bytes = (
        SELECT COALESCE(SUM(${bytes}), 0) FROM log_chunks WHERE log_chunks.job_id = jobs.id
      )
      WHERE EXISTS (SELECT 1 FROM log_chunks WHERE log_chunks.job_id = jobs.id)`);
  },
};
