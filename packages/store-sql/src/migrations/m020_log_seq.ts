import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Batched, idempotent log ingest (issue 17): a chunk the agent posts in a batch carries its
 * sequence number in the job, unique per job, so a retried batch is stored once
 * (`ON CONFLICT (job_id, seq) DO NOTHING`). Chunks posted one at a time (SPEC's form), the
 * control plane's own lines and the rows from before this migration have none: NULLs are distinct
 * in a unique index on both databases. The index also finds a job's last `seq` in one probe.
 */
export const logSeqMigration: TrellisMigration = {
  name: '020_log_seq',
  async up(knex: Knex, _dialect: DialectName): Promise<void> {
    await knex.schema.alterTable('log_chunks', (t) => {
      t.bigInteger('seq');
    });
    await knex.schema.alterTable('log_chunks', (t) => {
      t.unique(['job_id', 'seq'], { indexName: 'log_chunks_job_seq_unique' });
    });
  },
};
