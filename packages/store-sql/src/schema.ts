/**
 * Names shared by the migrations, the stores and the error translation, so a constraint is named
 * in one place and the ConflictError it becomes cannot drift from the DDL that creates it.
 */

export const TABLES = {
  users: 'users',
  identities: 'identities',
  cliLogins: 'cli_logins',
  refreshTokens: 'refresh_tokens',
  vineyards: 'vineyards',
  cloudIdentities: 'cloud_identities',
  vines: 'vines',
  vineComponents: 'vine_components',
  workers: 'workers',
  jobs: 'jobs',
  configSnapshots: 'config_snapshots',
  logChunks: 'log_chunks',
  planArtifacts: 'plan_artifacts',
  configurationVersions: 'configuration_versions',
  workerReleases: 'worker_releases',
  stateVersions: 'state_versions',
  stateLocks: 'state_locks',
  apiTokens: 'api_tokens',
  orgs: 'orgs',
  orgMembers: 'org_members',
  notifications: 'notifications',
  auditEntries: 'audit_entries',
  policies: 'policies',
  policyVersions: 'policy_versions',
  vcsConnections: 'vcs_connections',
  vcsDeliveries: 'vcs_deliveries',
  signingKeys: 'signing_keys',
  signInLinks: 'sign_in_links',
  vcsComments: 'vcs_comments',
  tfeAuthorizationCodes: 'tfe_authorization_codes',
  tfeRuns: 'tfe_runs',
  registryProviders: 'registry_providers',
  registryProviderVersions: 'registry_provider_versions',
  registryProviderPlatforms: 'registry_provider_platforms',
  registryGpgKeys: 'registry_gpg_keys',
  outbox: 'outbox',
  mirrorArchives: 'mirror_archives',
  registryModules: 'registry_modules',
  registryModuleVersions: 'registry_module_versions',
  moduleRepositories: 'module_repositories',
} as const;

export type TableName = (typeof TABLES)[keyof typeof TABLES];

/** Where knex records applied migrations; our own names so an embedding app's knex tables never clash. */
export const MIGRATIONS_TABLE = 'trellis_migrations';

/** A unique key whose violation callers can act on, with the `ConflictError` it becomes. */
export interface UniqueKey {
  /** The constraint's name on Postgres (what `error.constraint` reports). */
  constraint: string;
  table: TableName;
  /** The columns, in order (what SQLite's "UNIQUE constraint failed: t.a, t.b" names). */
  columns: readonly string[];
  code: string;
  message: string;
}

export const UNIQUE_KEYS: readonly UniqueKey[] = [
  {
    constraint: 'registry_module_versions_version_unique',
    table: 'registry_module_versions',
    columns: ['module_id', 'version'],
    code: 'module_version_exists',
    message: 'this module version is already published',
  },
  {
    constraint: 'users_email_unique',
    table: 'users',
    columns: ['email'],
    code: 'email_taken',
    message: 'a user with this email already exists',
  },
  {
    constraint: 'vineyards_owner_name_unique',
    table: 'vineyards',
    columns: ['owner_id', 'name'],
    code: 'vineyard_name_taken',
    message: 'you already have a vineyard with this name',
  },
  {
    constraint: 'vines_owner_name_unique',
    table: 'vines',
    columns: ['owner_id', 'name'],
    code: 'vine_name_taken',
    message: 'you already have a configuration with this name',
  },
  {
    constraint: 'vines_owner_project_name_unique',
    table: 'vines',
    columns: ['owner_id', 'project_name'],
    code: 'project_name_taken',
    message: 'you already have a configuration with this project name',
  },
  {
    constraint: 'worker_releases_version_unique',
    table: 'worker_releases',
    columns: ['version'],
    code: 'release_exists',
    message: 'this version is already published',
  },
  {
    constraint: 'signing_keys_slot_unique',
    table: 'signing_keys',
    columns: ['slot'],
    code: 'signing_key_conflict',
    message: 'another signing key was made at the same time',
  },
  {
    constraint: 'cli_logins_pkey',
    table: 'cli_logins',
    columns: ['device_code'],
    code: 'device_code_used',
    message: 'this device code already has a login',
  },
  {
    constraint: 'orgs_name_unique',
    table: 'orgs',
    columns: ['name'],
    code: 'org_name_taken',
    message: 'an organization with this name already exists',
  },
  {
    constraint: 'orgs_pkey',
    table: 'orgs',
    columns: ['id'],
    code: 'org_exists',
    message: 'an organization with this id exists',
  },
  {
    constraint: 'org_members_org_email_unique',
    table: 'org_members',
    columns: ['org_id', 'email'],
    code: 'member_exists',
    message: 'this email already is a member of the organization',
  },
  {
    constraint: 'org_members_id_unique',
    table: 'org_members',
    columns: ['id'],
    code: 'member_exists',
    message: 'a membership with this id exists',
  },
  {
    constraint: 'mirror_archives_address_unique',
    table: 'mirror_archives',
    columns: ['owner_id', 'hostname', 'namespace', 'type', 'version', 'os', 'arch'],
    code: 'mirror_archive_exists',
    message: 'the provider mirror already holds an archive of that provider, version and platform',
  },
  {
    constraint: 'registry_provider_versions_version_unique',
    table: 'registry_provider_versions',
    columns: ['provider_id', 'version'],
    code: 'provider_version_exists',
    message: 'this provider version is already published; versions never change',
  },
  {
    constraint: 'registry_provider_platforms_platform_unique',
    table: 'registry_provider_platforms',
    columns: ['version_id', 'os', 'arch'],
    code: 'provider_platform_exists',
    message: "this provider version's build for the platform is already uploaded",
  },
  {
    constraint: 'registry_gpg_keys_key_unique',
    table: 'registry_gpg_keys',
    columns: ['owner_id', 'key_id'],
    code: 'gpg_key_exists',
    message: 'the namespace already has this GPG key',
  },
];

/** The role owner-scoped units of work run as on Postgres; row-level security binds it. */
export const APP_ROLE = 'trellis_app';

/** The session setting that tells the row-level security policies who the owner is. */
export const OWNER_SETTING = 'trellis.user_id';

/**
 * The session setting naming the person doing the work (m010): in an owner scope the acting
 * member (the owner itself when it acts itself), in a member scope the person.
 */
export const ACTOR_SETTING = 'trellis.actor_id';
