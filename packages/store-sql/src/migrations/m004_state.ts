import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { APP_ROLE, OWNER_SETTING } from '../schema.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * The built-in `http` state backend (DESIGN §7): each vine's state versions (the bytes live in the
 * artifact store) and its lock. On Postgres, the same row-level security as every owned table.
 */
export const stateMigration: TrellisMigration = {
  name: '004_state',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const isPostgres = dialect === 'postgres';
    const json = isPostgres ? 'jsonb' : 'text';
    const time = isPostgres ? 'timestamptz' : 'text';

    await knex.schema.createTable('state_versions', (t) => {
      // Integer ids in write order: the newest version is the highest id.
      t.bigIncrements('id', { primaryKey: true });
      t.uuid('owner_id').notNullable().references('id').inTable('users');
      t.uuid('vine_id').notNullable().references('id').inTable('vines');
      t.bigInteger('serial').notNullable();
      t.text('lineage').notNullable();
      t.bigInteger('size').notNullable();
      t.text('sha256').notNullable();
      t.text('storage_key').notNullable();
      t.uuid('job_id').references('id').inTable('jobs');
      t.specificType('created_at', time).notNullable();
      t.index(['vine_id', 'id'], 'state_versions_vine_idx');
    });

    await knex.schema.createTable('state_locks', (t) => {
      // One lock per vine: the primary key is what makes taking it atomic.
      t.uuid('vine_id').primary().references('id').inTable('vines');
      t.uuid('owner_id').notNullable().references('id').inTable('users');
      t.text('lock_id').notNullable();
      t.specificType('info', json).notNullable();
      t.specificType('created_at', time).notNullable();
    });

    if (!isPostgres) return;
    await knex.raw(`GRANT SELECT, INSERT, UPDATE, DELETE ON state_versions, state_locks TO ${APP_ROLE}`);
    await knex.raw(`GRANT USAGE ON SEQUENCE state_versions_id_seq TO ${APP_ROLE}`);
    const currentOwner = `nullif(current_setting('${OWNER_SETTING}', true), '')::uuid`;
    for (const table of ['state_versions', 'state_locks']) {
      await knex.raw(`ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`);
      await knex.raw(`
        CREATE POLICY ${table}_owner_isolation ON ${table} TO ${APP_ROLE}
          USING (owner_id = ${currentOwner})
          WITH CHECK (owner_id = ${currentOwner})`);
    }
  },
};
