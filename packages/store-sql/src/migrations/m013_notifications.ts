import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { APP_ROLE } from '../schema.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Notifications and their outbox (issue 14). `notification_deliveries` is written in the same
 * transaction as the change it reports; the delivery worker takes due rows (`status = 'pending'`
 * and `next_attempt_at` passed) with `FOR UPDATE SKIP LOCKED` on Postgres. A delivery's attempts
 * are a JSON list on its row (a day of backoff makes a few dozen at most). Both tables belong to
 * the notification's owner and get the row-level security of every owned table (m010).
 */
export const notificationsMigration: TrellisMigration = {
  name: '013_notifications',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const isPostgres = dialect === 'postgres';
    const time = (table: Knex.CreateTableBuilder, name: string) =>
      table.specificType(name, isPostgres ? 'timestamptz' : 'text');
    await knex.schema.createTable('notifications', (t) => {
      t.bigIncrements('seq', { primaryKey: true });
      t.uuid('id').notNullable().unique({ indexName: 'notifications_id_unique' });
      t.uuid('owner_id').notNullable();
      t.uuid('created_by').notNullable();
      t.uuid('org_id');
      t.text('name').notNullable();
      t.text('kind').notNullable();
      t.text('url').notNullable();
      t.text('events').notNullable();
      t.uuid('vineyard_id');
      t.text('secret_sealed');
      time(t, 'created_at').notNullable();
      t.index(['owner_id', 'created_at', 'seq'], 'notifications_owner_idx');
    });
    await knex.schema.createTable('notification_deliveries', (t) => {
      t.bigIncrements('seq', { primaryKey: true });
      t.uuid('id').notNullable().unique({ indexName: 'notification_deliveries_id_unique' });
      t.uuid('owner_id').notNullable();
      t.uuid('notification_id').notNullable().references('id').inTable('notifications').onDelete('CASCADE');
      t.text('event').notNullable();
      t.text('payload').notNullable();
      t.text('status').notNullable();
      t.text('attempts').notNullable();
      time(t, 'created_at').notNullable();
      time(t, 'next_attempt_at').notNullable();
      time(t, 'finished_at');
      t.index(['notification_id', 'created_at', 'seq'], 'notification_deliveries_notification_idx');
      t.index(['status', 'next_attempt_at'], 'notification_deliveries_due_idx');
    });
    if (!isPostgres) return;

    const [current] = (await knex.raw('SELECT current_schema() AS schema')).rows as { schema: string }[];
    if (!current) throw new Error('m013: no current schema');
    const s = `"${current.schema.replaceAll('"', '""')}"`;
    for (const table of ['notifications', 'notification_deliveries']) {
      await knex.raw(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO ${APP_ROLE}`);
      await knex.raw(`GRANT USAGE ON SEQUENCE ${table}_seq_seq TO ${APP_ROLE}`);
      await knex.raw(`ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`);
      await knex.raw(`
        CREATE POLICY ${table}_visible_owners ON ${table} TO ${APP_ROLE}
          USING (owner_id = ANY (${s}.trellis_visible_owners()))
          WITH CHECK (owner_id = ANY (${s}.trellis_visible_owners()))`);
    }
  },
};
