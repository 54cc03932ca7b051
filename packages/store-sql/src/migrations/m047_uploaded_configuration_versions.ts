import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Uploaded configuration versions (issue 27): what the stock CLI asked of one
 * (`speculative`, `auto-queue-runs`, `provisional`; a run of a speculative version only plans)
 * and when its one upload began (`upload_started_at`: its signed URL is single-use, taken by a
 * conditional update). Additive: a replica of the previous release neither reads nor writes them.
 */
export const uploadedConfigurationVersionsMigration: TrellisMigration = {
  name: '047_uploaded_configuration_versions',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    await knex.schema.alterTable('configuration_versions', (t) => {
      t.boolean('speculative').notNullable().defaultTo(false);
      t.boolean('auto_queue_runs').notNullable().defaultTo(false);
      t.boolean('provisional').notNullable().defaultTo(false);
      t.specificType('upload_started_at', dialect === 'postgres' ? 'timestamptz' : 'text');
    });
  },
};
