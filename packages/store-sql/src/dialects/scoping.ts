import { type Scope, visibleOwners } from '@trellis/core';
import type { Knex } from 'knex';
import type { Row } from '../rows.js';
import type { TableName } from '../schema.js';

/**
 * The column naming each table's owner (null: the table belongs to nobody). Owner-scoped units of
 * work see and change only their owner's rows: Postgres enforces it with row-level security (see
 * migrations/m010_organizations.ts, which keeps its own frozen copy of this list); the
 * sessions of both dialects also apply it to every query they build, which is what isolates
 * owners on SQLite, including in the stores that take no owner argument (`users.get(id)`).
 */
export const OWNER_COLUMNS: Readonly<Record<TableName, string | null>> = {
  users: 'id',
  identities: 'user_id',
  cli_logins: 'profile_id',
  refresh_tokens: 'user_id',
  vineyards: 'owner_id',
  cloud_identities: 'owner_id',
  vines: 'owner_id',
  vine_components: 'owner_id',
  workers: 'owner_id',
  jobs: 'owner_id',
  config_snapshots: 'owner_id',
  log_chunks: 'owner_id',
  plan_artifacts: 'owner_id',
  configuration_versions: 'owner_id',
  worker_releases: null,
  state_versions: 'owner_id',
  state_locks: 'owner_id',
  api_tokens: 'owner_id',
  orgs: 'id',
  org_members: 'org_id',
  notifications: 'owner_id',
  audit_entries: 'owner_id',
  policies: 'owner_id',
  policy_versions: 'owner_id',
  vcs_connections: 'owner_id',
  vcs_deliveries: null,
  signing_keys: null,
  sign_in_links: null,
  vcs_comments: 'owner_id',
  tfe_authorization_codes: null,
  tfe_runs: 'owner_id',
  registry_providers: 'owner_id',
  registry_provider_versions: 'owner_id',
  registry_provider_platforms: 'owner_id',
  registry_gpg_keys: 'owner_id',
  outbox: 'owner_id',
  mirror_archives: 'owner_id',
  registry_modules: 'owner_id',
  registry_module_versions: 'owner_id',
  module_repositories: 'owner_id',
};

/** The one owner an owner scope is limited to, or null for system work; member scopes span several. */
export function scopeOwner(scope: Scope): string | null {
  if (scope.kind === 'member') throw new Error('this query needs one owner, not a member scope');
  return scope.kind === 'owner' ? scope.ownerId : null;
}

/**
 * The person whose own work a scope is (m010's `trellis_self()`): the person of a member scope, or
 * the owner of an owner scope that acts itself; null for an organization's work and system work.
 */
export function scopeSelf(scope: Scope): string | null {
  if (scope.kind === 'member') return scope.userId;
  if (scope.kind === 'owner' && (scope.actorId === undefined || scope.actorId === scope.ownerId)) {
    return scope.ownerId;
  }
  return null;
}

/** Narrows a query on `table` to the scope's rows (a qualified column, so joins stay unambiguous). */
export function restrictToScope(query: Knex.QueryBuilder, table: TableName, scope: Scope): Knex.QueryBuilder {
  const owners = visibleOwners(scope);
  const column = OWNER_COLUMNS[table];
  if (owners === null || column === null) return query;
  return owners.length === 1
    ? query.where(`${table}.${column}`, owners[0])
    : query.whereIn(`${table}.${column}`, owners);
}

/**
 * The insert-side rule (RLS's WITH CHECK): owner work writes only its owner's rows. A violation is
 * a bug in the caller, never a user's mistake, so it is a plain error.
 */
export function assertRowsInScope(table: TableName, rows: Row | Row[], scope: Scope): void {
  const owners = visibleOwners(scope);
  const column = OWNER_COLUMNS[table];
  if (owners === null) return;
  if (column === null) {
    throw new Error(`an owner-scoped unit of work may not write ${table}, which belongs to nobody`);
  }
  for (const row of Array.isArray(rows) ? rows : [rows]) {
    if (!owners.includes(row[column] as string)) {
      throw new Error(`an owner-scoped unit of work tried to write a ${table} row of another owner`);
    }
  }
}
