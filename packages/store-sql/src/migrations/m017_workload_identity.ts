import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Workload identity (issue 16).
 *
 * `cloud_identities` gains `kind` (`assume_role`, every existing row; or `oidc`) and `settings`,
 * the per-cloud settings of an OIDC identity (AWS audience and session duration, Google Cloud's
 * workload identity provider, service account and audience, Azure's tenant, client and audience).
 * An OIDC identity of AWS keeps its role in `role_arn`; `role_arn` and `external_id` are empty
 * text where a kind has none (the columns stay NOT NULL: no table rebuild on SQLite).
 *
 * `signing_keys`: the OIDC issuer's keys. System records, owned by nobody: on Postgres the
 * application role gets no grant at all (owner work never reads a private key, even sealed);
 * only system work, which runs as the connecting role, touches them.
 */
export const workloadIdentityMigration: TrellisMigration = {
  name: '017_workload_identity',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const isPostgres = dialect === 'postgres';
    const time = (table: Knex.CreateTableBuilder, name: string) =>
      table.specificType(name, isPostgres ? 'timestamptz' : 'text');
    await knex.schema.alterTable('cloud_identities', (t) => {
      t.text('kind').notNullable().defaultTo('assume_role');
      t.specificType('settings', isPostgres ? 'jsonb' : 'text')
        .notNullable()
        .defaultTo('{}');
    });
    await knex.schema.createTable('signing_keys', (t) => {
      t.text('id').primary();
      t.text('algorithm').notNullable();
      t.specificType('public_jwk', isPostgres ? 'jsonb' : 'text').notNullable();
      t.text('private_key_sealed').notNullable();
      time(t, 'created_at').notNullable();
      time(t, 'retired_at');
      time(t, 'published_until');
      // 'current' on the one key that signs, NULL once retired: two replicas making the first key
      // (or rotating) at once cannot both succeed.
      t.text('slot').unique({ indexName: 'signing_keys_slot_unique' });
      t.check(`algorithm IN ('RS256', 'ES256')`, [], 'signing_keys_algorithm_check');
      t.index(['retired_at', 'created_at'], 'signing_keys_current_idx');
    });
  },
};
