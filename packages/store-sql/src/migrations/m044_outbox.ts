import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { APP_ROLE } from '../schema.js';
import { visibleOwnersCheck } from './m024_row_security_once.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * One outbox (issue 24). Notification deliveries (m013's `notification_deliveries`) and git
 * provider feedback (m019's `vcs_feedback`) become rows of one table, `outbox`, told apart by
 * `kind` (`notification`, `vcs_feedback`), each kind with the columns it is looked up by
 * (`notification_id` and `event`; `job_id`, `vine_id`, `provider` and `subject`) and its payload as
 * JSON. One delivery task takes due rows with `FOR UPDATE SKIP LOCKED` on Postgres. Owned by the
 * notification's or job's owner, with the row-level security of every owned table (m010, m024);
 * a notification's rows go with it, feedback with its job and vine.
 *
 * Every row of the two old tables is moved (inserted here in written order, so feedback keeps
 * which item is newer, then deleted there), history included, so delivery lists and a job's
 * feedback read the same after the upgrade. The old tables stay, empty (expand, then contract:
 * a replica of the previous release still reads and writes them during a rolling upgrade and
 * sends what it writes there with its own workers); a later release's contract step moves what
 * may be left in them and drops them.
 */
export const outboxMigration: TrellisMigration = {
  name: '044_outbox',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const isPostgres = dialect === 'postgres';
    const time = (table: Knex.CreateTableBuilder, name: string) =>
      table.specificType(name, isPostgres ? 'timestamptz' : 'text');
    await knex.schema.createTable('outbox', (t) => {
      t.bigIncrements('seq', { primaryKey: true });
      t.uuid('id').notNullable().unique({ indexName: 'outbox_id_unique' });
      t.uuid('owner_id').notNullable();
      t.text('kind').notNullable();
      t.uuid('notification_id').references('id').inTable('notifications').onDelete('CASCADE');
      t.text('event');
      t.uuid('job_id').references('id').inTable('jobs').onDelete('CASCADE');
      t.uuid('vine_id').references('id').inTable('vines').onDelete('CASCADE');
      t.text('provider');
      t.text('subject');
      t.text('payload').notNullable();
      t.text('status').notNullable();
      t.text('attempts').notNullable();
      time(t, 'created_at').notNullable();
      time(t, 'next_attempt_at').notNullable();
      time(t, 'finished_at');
      t.check(
        `(kind = 'notification' AND notification_id IS NOT NULL AND event IS NOT NULL)
         OR (kind = 'vcs_feedback' AND job_id IS NOT NULL AND vine_id IS NOT NULL AND provider IS NOT NULL
             AND subject IS NOT NULL)`,
        [],
        'outbox_kind_check',
      );
      t.check(`status IN ('pending', 'delivered', 'failed', 'superseded')`, [], 'outbox_status_check');
      t.index(['status', 'next_attempt_at'], 'outbox_due_idx');
      t.index(['notification_id', 'created_at', 'seq'], 'outbox_notification_idx');
      t.index(['job_id', 'seq'], 'outbox_job_idx');
      t.index(['vine_id', 'subject', 'seq'], 'outbox_subject_idx');
    });

    await knex.raw(`
      INSERT INTO outbox (id, owner_id, kind, job_id, vine_id, provider, subject, payload, status, attempts,
                          created_at, next_attempt_at, finished_at)
      SELECT id, owner_id, 'vcs_feedback', job_id, vine_id, provider, subject, payload, status, attempts,
             created_at, next_attempt_at, finished_at
        FROM vcs_feedback ORDER BY seq`);
    await knex.raw(`
      INSERT INTO outbox (id, owner_id, kind, notification_id, event, payload, status, attempts,
                          created_at, next_attempt_at, finished_at)
      SELECT id, owner_id, 'notification', notification_id, event, payload, status, attempts,
             created_at, next_attempt_at, finished_at
        FROM notification_deliveries ORDER BY seq`);
    await knex.raw('DELETE FROM vcs_feedback');
    await knex.raw('DELETE FROM notification_deliveries');
    if (!isPostgres) return;

    const [current] = (await knex.raw('SELECT current_schema() AS schema')).rows as { schema: string }[];
    if (!current) throw new Error('m044: no current schema');
    const check = visibleOwnersCheck('owner_id', current.schema);
    await knex.raw(`GRANT SELECT, INSERT, UPDATE, DELETE ON outbox TO ${APP_ROLE}`);
    await knex.raw(`GRANT USAGE ON SEQUENCE outbox_seq_seq TO ${APP_ROLE}`);
    await knex.raw('ALTER TABLE outbox ENABLE ROW LEVEL SECURITY');
    await knex.raw(`
      CREATE POLICY outbox_visible_owners ON outbox TO ${APP_ROLE}
        USING (${check}) WITH CHECK (${check})`);
  },
};
