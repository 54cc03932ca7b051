import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { MIGRATIONS_TABLE } from '../schema.js';
import { recordsMigration } from './m001_records.js';
import { postgresRowSecurityMigration } from './m002_postgres_row_security.js';
import { postgresClaimNextJobMigration } from './m003_postgres_claim_next_job.js';
import { stateMigration } from './m004_state.js';
import { cliLoginProviderMigration } from './m005_cli_login_provider.js';
import { paginationSnapshotsMigration } from './m006_pagination_snapshots.js';
import { capsRetentionMigration } from './m007_caps_retention.js';
import { rateLimitsMigration } from './m008_rate_limits.js';
import { claimRulesMigration } from './m009_claim_rules.js';
import { organizationsMigration } from './m010_organizations.js';
import { apiTokensMigration } from './m011_api_tokens.js';
import { driftTriggersMigration } from './m012_drift_triggers.js';
import { notificationsMigration } from './m013_notifications.js';
import { auditMigration } from './m014_audit.js';
import { policiesMigration } from './m015_policies.js';
import { planReviewsMigration } from './m016_plan_reviews.js';
import { vcsConnectionsMigration } from './m018_vcs_connections.js';
import { workloadIdentityMigration } from './m017_workload_identity.js';
import { vcsFeedbackMigration } from './m019_vcs_feedback.js';
import { claimOneTripMigration } from './m022_claim_one_trip.js';
import type { TrellisMigration } from './TrellisMigration.js';

/** In order. Both dialects record every migration, even those that do nothing on SQLite. */
export const MIGRATIONS: readonly TrellisMigration[] = [
  recordsMigration,
  postgresRowSecurityMigration,
  postgresClaimNextJobMigration,
  stateMigration,
  cliLoginProviderMigration,
  paginationSnapshotsMigration,
  capsRetentionMigration,
  rateLimitsMigration,
  claimRulesMigration,
  organizationsMigration,
  apiTokensMigration,
  driftTriggersMigration,
  notificationsMigration,
  auditMigration,
  policiesMigration,
  planReviewsMigration,
  workloadIdentityMigration,
  vcsConnectionsMigration,
  vcsFeedbackMigration,
  claimOneTripMigration,
];

/** knex's migrator configured with the migrations above, not a directory. */
export function migratorConfig(dialect: DialectName): Knex.MigratorConfig {
  const source: Knex.MigrationSource<TrellisMigration> = {
    getMigrations: async () => [...MIGRATIONS],
    getMigrationName: (migration) => migration.name,
    getMigration: async (migration) => ({
      config: { transaction: migration.transactional?.(dialect) ?? true },
      up: (knex: Knex) => migration.up(knex, dialect),
      // knex insists on a `down`; ours are forward-only (restore a backup to go back).
      down: async () => {
        throw new Error(`migration ${migration.name} cannot be undone: Trellis migrations are forward-only`);
      },
    }),
  };
  return { migrationSource: source, tableName: MIGRATIONS_TABLE };
}
