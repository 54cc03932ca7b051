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
import { logSeqMigration } from './m020_log_seq.js';
import { claimOneTripMigration } from './m022_claim_one_trip.js';
import { hotQueryIndexesMigration } from './m023_hot_query_indexes.js';
import { rowSecurityOnceMigration } from './m024_row_security_once.js';
import { vcsGuardsMigration } from './m029_vcs_guards.js';
import { orgInvitationsMigration } from './m031_org_invitations.js';
import { tfeWorkspacesMigration } from './m033_tfe_workspaces.js';
import { tfeLoginCodesMigration } from './m034_tfe_login_codes.js';
import { signInLinksMigration } from './m038_sign_in_links.js';
import { deployGateMigration } from './m039_deploy_gate.js';
import { uploadedConfigurationVersionsMigration } from './m047_uploaded_configuration_versions.js';
import { configurationVersionsMigration } from './m040_configuration_versions.js';
import { vineDeletionMigration } from './m041_vine_deletion.js';
import { workspaceSettingsMigration } from './m043_workspace_settings.js';
import { typedJobResultsMigration } from './m025_typed_job_results.js';
import { tfeRunsMigration } from './m045_tfe_runs.js';
import { outboxMigration } from './m044_outbox.js';
import { providerMirrorMigration } from './m050_provider_mirror.js';
import { registryModulesMigration } from './m048_registry_modules.js';
import { registryProvidersMigration } from './m049_registry_providers.js';
import { stateAfterLostMigration } from './m052_state_after_lost.js';
import { moduleRepositoriesMigration } from './m051_module_repositories.js';
import { mirrorPullThroughMigration } from './m053_mirror_pull_through.js';
import { planChangesMigration } from './m054_plan_changes.js';
import { runQueueOrderMigration } from './m055_run_queue_order.js';
import { fleetMigration } from './m056_fleet.js';
import { deployOfferMigration } from './m057_deploy_offer.js';
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
  logSeqMigration,
  claimOneTripMigration,
  hotQueryIndexesMigration,
  rowSecurityOnceMigration,
  vcsGuardsMigration,
  orgInvitationsMigration,
  tfeWorkspacesMigration,
  tfeLoginCodesMigration,
  signInLinksMigration,
  typedJobResultsMigration,
  configurationVersionsMigration,
  vineDeletionMigration,
  workspaceSettingsMigration,
  deployGateMigration,
  outboxMigration,
  tfeRunsMigration,
  uploadedConfigurationVersionsMigration,
  registryModulesMigration,
  registryProvidersMigration,
  providerMirrorMigration,
  moduleRepositoriesMigration,
  stateAfterLostMigration,
  mirrorPullThroughMigration,
  planChangesMigration,
  runQueueOrderMigration,
  fleetMigration,
  deployOfferMigration,
];

/**
 * knex's migrator configured with `migrations` (Trellis's own unless told), not a directory.
 * A database may hold migrations this list does not know: a newer release applied them while this
 * one keeps running beside it (rolling upgrade; their being additive is what makes that safe), so
 * knex's check that every applied migration is known ("the migration directory is corrupt") is off.
 */
export function migratorConfig(
  dialect: DialectName,
  migrations: readonly TrellisMigration[] = MIGRATIONS,
): Knex.MigratorConfig {
  const source: Knex.MigrationSource<TrellisMigration> = {
    getMigrations: async () => [...migrations],
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
  return { migrationSource: source, tableName: MIGRATIONS_TABLE, disableMigrationsListValidation: true };
}

/**
 * Applies the pending ones of `migrations` (the caller holds the migration lock), then says so
 * when the database is ahead of them: applied migrations they do not know mean a newer release
 * migrated it, which this process runs beside until it is upgraded too.
 */
export async function migrateToLatest(
  knex: Knex,
  dialect: DialectName,
  migrations: readonly TrellisMigration[],
  logger: { warn(message: string): void },
): Promise<void> {
  const config = migratorConfig(dialect, migrations);
  await knex.migrate.latest(config);
  const [completed] = (await knex.migrate.list(config)) as [Array<{ name: string }>, unknown];
  const known = new Set(migrations.map((migration) => migration.name));
  const newer = completed.map((migration) => migration.name).filter((name) => !known.has(name));
  if (newer.length > 0) {
    logger.warn(
      `the database has ${newer.length} migration(s) newer than this release (${newer.join(', ')}): ` +
        'running beside a newer release on its expanded schema; upgrade this replica too',
    );
  }
}

/** The names of `migrations` the database has not applied, without creating knex's tables. */
export async function pendingMigrations(
  knex: Knex,
  dialect: DialectName,
  migrations: readonly TrellisMigration[],
): Promise<string[]> {
  if (!(await knex.schema.hasTable(MIGRATIONS_TABLE))) return migrations.map((migration) => migration.name);
  const [, pending] = (await knex.migrate.list(migratorConfig(dialect, migrations))) as [unknown, TrellisMigration[]];
  return pending.map((migration) => migration.name);
}
