import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { APP_ROLE } from '../schema.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Feedback at the git provider (issue 13). `vcs_feedback` is the outbox of commit statuses and
 * pull request comments, written in the same transaction as the job change it reports and taken
 * by the feedback worker with `FOR UPDATE SKIP LOCKED` on Postgres (like notification deliveries,
 * m013); `vcs_comments` keeps the provider's id of each vine's comment per pull request, so every
 * new plan edits the same comment. Both belong to the job's owner, with the row-level security of
 * every owned table (m010), and go with the vine.
 */
export const vcsFeedbackMigration: TrellisMigration = {
  name: '019_vcs_feedback',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const isPostgres = dialect === 'postgres';
    const time = (table: Knex.CreateTableBuilder, name: string) =>
      table.specificType(name, isPostgres ? 'timestamptz' : 'text');
    await knex.schema.createTable('vcs_feedback', (t) => {
      t.bigIncrements('seq', { primaryKey: true });
      t.uuid('id').notNullable().unique({ indexName: 'vcs_feedback_id_unique' });
      t.uuid('owner_id').notNullable();
      t.uuid('job_id').notNullable().references('id').inTable('jobs').onDelete('CASCADE');
      t.uuid('vine_id').notNullable().references('id').inTable('vines').onDelete('CASCADE');
      t.text('provider').notNullable();
      t.text('kind').notNullable();
      t.text('subject').notNullable();
      t.text('payload').notNullable();
      t.text('status').notNullable();
      t.text('attempts').notNullable();
      time(t, 'created_at').notNullable();
      time(t, 'next_attempt_at').notNullable();
      time(t, 'finished_at');
      t.check(`kind IN ('status', 'comment')`, [], 'vcs_feedback_kind_check');
      t.check(`status IN ('pending', 'delivered', 'failed', 'superseded')`, [], 'vcs_feedback_status_check');
      t.index(['status', 'next_attempt_at'], 'vcs_feedback_due_idx');
      t.index(['job_id', 'seq'], 'vcs_feedback_job_idx');
      t.index(['vine_id', 'subject', 'seq'], 'vcs_feedback_subject_idx');
    });
    await knex.schema.createTable('vcs_comments', (t) => {
      t.uuid('vine_id').notNullable().references('id').inTable('vines').onDelete('CASCADE');
      t.uuid('owner_id').notNullable();
      t.text('provider').notNullable();
      /** Lower-cased: providers spell repository names case-insensitively. */
      t.text('repository_key').notNullable();
      t.text('repository').notNullable();
      t.integer('number').notNullable();
      t.text('comment_id').notNullable();
      time(t, 'updated_at').notNullable();
      t.primary(['vine_id', 'provider', 'repository_key', 'number'], 'vcs_comments_pkey');
    });
    if (!isPostgres) return;

    const [current] = (await knex.raw('SELECT current_schema() AS schema')).rows as { schema: string }[];
    if (!current) throw new Error('m019: no current schema');
    const s = `"${current.schema.replaceAll('"', '""')}"`;
    await knex.raw(`GRANT USAGE ON SEQUENCE vcs_feedback_seq_seq TO ${APP_ROLE}`);
    for (const table of ['vcs_feedback', 'vcs_comments']) {
      await knex.raw(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO ${APP_ROLE}`);
      await knex.raw(`ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`);
      await knex.raw(`
        CREATE POLICY ${table}_visible_owners ON ${table} TO ${APP_ROLE}
          USING (owner_id = ANY (${s}.trellis_visible_owners()))
          WITH CHECK (owner_id = ANY (${s}.trellis_visible_owners()))`);
    }
  },
};
