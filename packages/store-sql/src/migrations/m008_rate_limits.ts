import type { Knex } from 'knex';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Counters of the rate limits (`RateLimitStore`), so replicas on one database share them: one
 * fixed window per key. Not owned by anyone: only system work (the connecting role) touches them.
 */
export const rateLimitsMigration: TrellisMigration = {
  name: '008_rate_limits',
  async up(knex: Knex): Promise<void> {
    await knex.schema.createTable('rate_limits', (t) => {
      t.text('limit_key').primary();
      t.integer('hits').notNullable();
      // Milliseconds since the epoch: compared with the caller's clock, never the database's.
      t.bigInteger('resets_at').notNullable();
      t.index(['resets_at'], 'rate_limits_resets_at_idx');
    });
  },
};
