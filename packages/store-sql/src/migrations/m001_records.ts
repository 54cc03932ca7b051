import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import type { TrellisMigration } from './TrellisMigration.js';

/** Every record of DESIGN §2. */
export const recordsMigration: TrellisMigration = {
  name: '001_records',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const isPostgres = dialect === 'postgres';
    /** jsonb on Postgres; JSON text on SQLite (declared `text` so SQLite never coerces it to a number). */
    const json = (table: Knex.CreateTableBuilder, name: string) =>
      table.specificType(name, isPostgres ? 'jsonb' : 'text');
    /** timestamptz on Postgres; ISO-8601 UTC text on SQLite, always in one fixed-width form. */
    const time = (table: Knex.CreateTableBuilder, name: string) =>
      table.specificType(name, isPostgres ? 'timestamptz' : 'text');
    const owner = (table: Knex.CreateTableBuilder, name = 'owner_id') =>
      table.uuid(name).notNullable().references('id').inTable('users');
    /**
     * Records that are listed in time order get `seq`, their insertion order: times come from
     * application clocks and can tie (a fake clock often does not move), and FIFO per vine must
     * not depend on them. `seq` is the primary key so both dialects can give it the same
     * autoincrement; the public key (`id`, or a release's `version`) is unique beside it.
     */
    const sequenced = (table: Knex.CreateTableBuilder) => table.bigIncrements('seq', { primaryKey: true });

    await knex.schema.createTable('users', (t) => {
      t.uuid('id').primary();
      t.text('email').notNullable().unique({ indexName: 'users_email_unique' });
      t.text('name').notNullable();
      time(t, 'created_at').notNullable();
    });

    await knex.schema.createTable('identities', (t) => {
      owner(t, 'user_id');
      t.text('provider').notNullable();
      t.text('provider_user_id').notNullable();
      t.text('provider_token');
      t.text('scopes').notNullable();
      t.primary(['provider', 'provider_user_id']);
      t.index(['user_id'], 'identities_user_idx');
    });

    await knex.schema.createTable('cli_logins', (t) => {
      t.uuid('device_code').primary();
      t.text('verification_code').notNullable();
      t.uuid('profile_id').references('id').inTable('users');
      time(t, 'created_at').notNullable();
      time(t, 'expires_at').notNullable();
      t.integer('attempts').notNullable().defaultTo(0);
      time(t, 'consumed_at');
    });

    await knex.schema.createTable('refresh_tokens', (t) => {
      t.uuid('id').primary();
      owner(t, 'user_id');
      t.uuid('family_id').notNullable();
      time(t, 'expires_at').notNullable();
      time(t, 'rotated_at');
      time(t, 'revoked_at');
      t.index(['family_id'], 'refresh_tokens_family_idx');
      t.index(['user_id'], 'refresh_tokens_user_idx');
    });

    await knex.schema.createTable('vineyards', (t) => {
      sequenced(t);
      t.uuid('id').notNullable().unique({ indexName: 'vineyards_id_unique' });
      owner(t);
      t.text('name').notNullable();
      time(t, 'created_at').notNullable();
      t.unique(['owner_id', 'name'], { indexName: 'vineyards_owner_name_unique' });
      t.index(['owner_id', 'created_at', 'seq'], 'vineyards_owner_idx');
    });

    await knex.schema.createTable('cloud_identities', (t) => {
      t.uuid('id').primary();
      owner(t);
      t.text('provider').notNullable();
      t.text('role_arn').notNullable();
      t.text('external_id').notNullable();
      t.index(['owner_id'], 'cloud_identities_owner_idx');
    });

    await knex.schema.createTable('vines', (t) => {
      sequenced(t);
      t.uuid('id').notNullable().unique({ indexName: 'vines_id_unique' });
      owner(t);
      t.uuid('vineyard_id').notNullable().references('id').inTable('vineyards');
      t.text('name').notNullable();
      t.text('project_name').notNullable();
      t.uuid('cloud_identity_id').references('id').inTable('cloud_identities');
      json(t, 'source').notNullable();
      json(t, 'variables').notNullable();
      json(t, 'engine').notNullable();
      t.text('status').notNullable();
      t.text('status_message');
      time(t, 'created_at').notNullable();
      time(t, 'updated_at').notNullable();
      t.unique(['owner_id', 'name'], { indexName: 'vines_owner_name_unique' });
      t.unique(['owner_id', 'project_name'], { indexName: 'vines_owner_project_name_unique' });
      t.index(['owner_id', 'created_at', 'seq'], 'vines_owner_idx');
      t.index(['vineyard_id'], 'vines_vineyard_idx');
    });

    await knex.schema.createTable('workers', (t) => {
      sequenced(t);
      t.uuid('id').notNullable().unique({ indexName: 'workers_id_unique' });
      owner(t);
      t.text('name').notNullable();
      t.text('mode').notNullable();
      t.text('token_hash').notNullable();
      time(t, 'last_heartbeat');
      t.text('version');
      json(t, 'metadata').notNullable();
      time(t, 'created_at').notNullable();
      time(t, 'destroyed_at');
      t.index(['owner_id', 'created_at', 'seq'], 'workers_owner_idx');
    });

    await knex.schema.createTable('jobs', (t) => {
      sequenced(t);
      t.uuid('id').notNullable().unique({ indexName: 'jobs_id_unique' });
      owner(t);
      t.text('job_type').notNullable();
      t.text('status').notNullable();
      json(t, 'config_snapshot').notNullable();
      t.text('config_hash').notNullable();
      t.uuid('vine_id').references('id').inTable('vines');
      t.uuid('vineyard_id').references('id').inTable('vineyards');
      t.uuid('cloud_identity_id').references('id').inTable('cloud_identities');
      t.uuid('assigned_worker_id').references('id').inTable('workers');
      t.uuid('claimed_by_worker_id').references('id').inTable('workers');
      t.uuid('plan_job_id').references('id').inTable('jobs');
      t.uuid('target_worker_id').references('id').inTable('workers');
      json(t, 'execution_metadata').notNullable();
      t.text('error_message');
      t.text('vine_status_before');
      time(t, 'created_at').notNullable();
      time(t, 'claimed_at');
      time(t, 'finished_at');
      // The claim: an owner's QUEUED jobs oldest first, and the per-vine checks beside it.
      t.index(['owner_id', 'status', 'seq'], 'jobs_owner_status_idx');
      t.index(['vine_id', 'status', 'seq'], 'jobs_vine_status_idx');
      // Lists (newest first), the lost-agent sweep, busy workers, cancel notices, plan reuse.
      t.index(['owner_id', 'seq'], 'jobs_owner_seq_idx');
      t.index(['status', 'claimed_by_worker_id'], 'jobs_status_worker_idx');
      t.index(['claimed_by_worker_id', 'status'], 'jobs_worker_status_idx');
      t.index(['plan_job_id'], 'jobs_plan_idx');
    });

    await knex.schema.createTable('vine_components', (t) => {
      t.uuid('vine_id').notNullable().references('id').inTable('vines');
      owner(t);
      t.text('kind').notNullable();
      json(t, 'data').notNullable();
      t.uuid('job_id').notNullable().references('id').inTable('jobs');
      time(t, 'updated_at').notNullable();
      t.primary(['vine_id', 'kind']);
    });

    await knex.schema.createTable('log_chunks', (t) => {
      // Integer ids that only increase: readers page with `after=<id>`.
      t.bigIncrements('id', { primaryKey: true });
      t.uuid('job_id').notNullable().references('id').inTable('jobs');
      owner(t);
      t.text('log_chunk').notNullable();
      t.text('stream_type').notNullable();
      time(t, 'created_at').notNullable();
      t.index(['job_id', 'id'], 'log_chunks_job_idx');
    });

    await knex.schema.createTable('plan_artifacts', (t) => {
      t.uuid('job_id').primary().references('id').inTable('jobs');
      owner(t);
      t.text('storage_key').notNullable();
      t.bigInteger('size').notNullable();
      t.text('sha256').notNullable();
      time(t, 'created_at').notNullable();
    });

    await knex.schema.createTable('worker_releases', (t) => {
      sequenced(t);
      t.text('version').notNullable().unique({ indexName: 'worker_releases_version_unique' });
      t.text('release_notes').notNullable();
      time(t, 'published_at').notNullable();
      t.index(['published_at', 'seq'], 'worker_releases_published_idx');
    });
  },
};
