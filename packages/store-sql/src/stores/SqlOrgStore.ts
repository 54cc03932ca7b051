import {
  isOrgRole,
  type Membership,
  NotFoundError,
  type Org,
  type OrgMember,
  type OrgRole,
  type OrgStore,
  type Page,
  type PageRequest,
  visibleOwners,
} from '@trellis/core';
import type { Knex } from 'knex';
import type { SqlSession } from '../dialects/Dialect.js';
import { OWNER_COLUMNS, restrictToScope, scopeSelf } from '../dialects/scoping.js';
import { type Row, textOut, timeIn, timeInOrNull, timeOut, timeOutOrNull, uuidOut, uuidOutOrNull } from '../rows.js';
import type { TableName } from '../schema.js';
import { keysetPage } from './keysetPage.js';

/**
 * What deleting an organization does with the rows it owns in each table (issue 23). A record of
 * every table, so a new table does not compile until its owner says what becomes of its rows:
 * - `delete`: deleted, in the order of `ORG_DELETE_ORDER` (children first: those foreign keys do
 *   not cascade);
 * - `cascade`: deleted with a parent row by a foreign key (`ON DELETE CASCADE`);
 * - `kept`: the audit log is append-only (the application role may not delete from it); its
 *   entries stay until retention prunes them, readable by nobody once the organization is gone;
 * - `none`: the table holds no rows of an organization.
 */
export const ORG_DELETION: Readonly<Record<TableName, 'delete' | 'cascade' | 'kept' | 'none'>> = {
  users: 'none',
  identities: 'none',
  cli_logins: 'none',
  refresh_tokens: 'none',
  vineyards: 'delete',
  cloud_identities: 'delete',
  vines: 'delete',
  vine_components: 'delete',
  workers: 'delete',
  jobs: 'delete',
  config_snapshots: 'delete',
  log_chunks: 'delete',
  plan_artifacts: 'delete',
  configuration_versions: 'delete',
  worker_releases: 'none',
  state_versions: 'delete',
  state_locks: 'delete',
  api_tokens: 'delete',
  // The organization's own row goes last; its memberships (and invitations) cascade with it.
  orgs: 'delete',
  org_members: 'cascade',
  notifications: 'delete',
  audit_entries: 'kept',
  policies: 'delete',
  policy_versions: 'cascade',
  vcs_connections: 'cascade',
  vcs_deliveries: 'none',
  signing_keys: 'none',
  vcs_comments: 'cascade',
  sign_in_links: 'none',
  tfe_authorization_codes: 'none',
  // A run goes with its plan job (issue 27).
  tfe_runs: 'cascade',
  // Goes with its notification, or its job and vine.
  outbox: 'cascade',
  mirror_archives: 'delete',
  registry_modules: 'delete',
  registry_module_versions: 'delete',
  // The registry's providers and keys (issue 28): platforms, then versions, then providers.
  registry_providers: 'delete',
  registry_provider_versions: 'delete',
  registry_provider_platforms: 'delete',
  registry_gpg_keys: 'delete',
  // Its modules' git repositories (issue 28); the hooks at the provider are left (deliveries find no connection).
  module_repositories: 'delete',
};

/** The tables of `ORG_DELETION`'s `delete`, in the order their rows go (children before parents). */
export const ORG_DELETE_ORDER: readonly TableName[] = [
  'log_chunks',
  'plan_artifacts',
  'state_locks',
  'state_versions',
  'vine_components',
  'config_snapshots',
  'jobs',
  'configuration_versions',
  'mirror_archives',
  'vines',
  'cloud_identities',
  'policies',
  'notifications',
  'vineyards',
  'workers',
  'api_tokens',
  'registry_module_versions',
  'registry_modules',
  'registry_provider_platforms',
  'registry_provider_versions',
  'registry_providers',
  'registry_gpg_keys',
  'module_repositories',
  'orgs',
];

/**
 * Organizations and members (m010). An organization row's owner is the organization itself, a
 * membership's its organization, so owner-scoped work of the organization sees them.
 *
 * Three methods cross owners by design, for the person they name: `membershipsOf(userId)` reads
 * the person's joined memberships, `invitationsAt(email)` the invitations at the person's email and
 * `acceptInvitation` makes one of them the person's (issue 23). They work in system scope, and in
 * the person's own work (their member scope, or their own owner scope without another actor): on
 * Postgres the policies of m010 let a person read their own membership rows and claim pending ones
 * at the email of their own user row; on SQLite this store applies the same rule.
 */
export class SqlOrgStore implements OrgStore {
  constructor(private readonly db: SqlSession) {}

  async create(org: Org): Promise<Org> {
    const [row] = await this.db.recoverable((db) =>
      db.insert('orgs', { id: org.id, name: org.name, created_at: timeIn(org.created_at) }).returning('*'),
    );
    return toOrg(row);
  }

  async get(id: string): Promise<Org | null> {
    const row = await this.db.table('orgs').where({ id }).first();
    return row ? toOrg(row) : null;
  }

  async rename(id: string, name: string): Promise<Org> {
    const [row] = await this.db.recoverable((db) => db.table('orgs').where({ id }).update({ name }).returning('*'));
    if (!row) throw new NotFoundError('org');
    return toOrg(row);
  }

  async delete(id: string): Promise<void> {
    if (!(await this.db.table('orgs').where({ id }).first('id'))) return;
    for (const table of ORG_DELETE_ORDER) {
      const column = OWNER_COLUMNS[table];
      if (column === null) throw new Error(`ORG_DELETE_ORDER names ${table}, which has no owner`);
      await this.db
        .table(table)
        .where({ [column]: id })
        .delete();
    }
  }

  async membershipsOf(userId: string): Promise<Membership[]> {
    const rows: Row[] = await this.crossOwner(this.db.unscoped('org_members'), userId)
      .where({ user_id: userId })
      .whereNotNull('joined_at')
      .orderBy([{ column: 'joined_at' }, { column: 'seq' }])
      .select('org_id', 'role');
    return rows.map((row) => ({ org_id: uuidOut(row.org_id), role: roleOut(row.role) }));
  }

  async pageMembers(orgId: string, request: PageRequest): Promise<Page<OrgMember>> {
    return keysetPage(
      this.db.table('org_members').where({ org_id: orgId }),
      'created_at',
      request,
      toMember,
      'seq',
      'asc',
    );
  }

  async getMember(orgId: string, memberId: string): Promise<OrgMember | null> {
    const row = await this.db.table('org_members').where({ org_id: orgId, id: memberId }).first();
    return row ? toMember(row) : null;
  }

  async addMember(member: OrgMember): Promise<OrgMember> {
    const [row] = await this.db.recoverable((db) =>
      db
        .insert('org_members', {
          id: member.id,
          org_id: member.org_id,
          user_id: member.user_id,
          email: member.email,
          role: member.role,
          created_at: timeIn(member.created_at),
          joined_at: timeInOrNull(member.joined_at),
          invited_by: member.invited_by,
        })
        .returning('*'),
    );
    return toMember(row);
  }

  async setRole(orgId: string, memberId: string, role: OrgRole): Promise<OrgMember> {
    const [row] = await this.db
      .table('org_members')
      .where({ org_id: orgId, id: memberId })
      .update({ role })
      .returning('*');
    if (!row) throw new NotFoundError('member');
    return toMember(row);
  }

  async removeMember(orgId: string, memberId: string): Promise<void> {
    await this.db.table('org_members').where({ org_id: orgId, id: memberId }).delete();
  }

  async countOwners(orgId: string): Promise<number> {
    const row = await this.db
      .table('org_members')
      .where({ org_id: orgId, role: 'owner' })
      .count({ owners: '*' })
      .first();
    return Number(row?.owners ?? 0);
  }

  async lock(orgId: string): Promise<void> {
    await this.db.lockForUpdate(this.db.table('orgs').where({ id: orgId })).first('id');
  }

  async invitationsAt(email: string): Promise<OrgMember[]> {
    const self = scopeSelf(this.db.scope);
    const query = this.db.unscoped('org_members').whereNull('user_id').whereRaw('lower(email) = lower(?)', [email]);
    const rows: Row[] = await (self === null
      ? restrictToScope(query, 'org_members', this.db.scope)
      : this.crossOwner(query, self, true)
    )
      .orderBy([{ column: 'created_at' }, { column: 'seq' }])
      .select('*');
    return rows.map(toMember);
  }

  async acceptInvitation(memberId: string, email: string, userId: string, at: string): Promise<OrgMember | null> {
    const [row] = await this.crossOwner(this.db.unscoped('org_members'), userId, true)
      .where({ id: memberId })
      .whereNull('user_id')
      .whereRaw('lower(email) = lower(?)', [email])
      .update({ user_id: userId, joined_at: timeIn(at) })
      .returning('*');
    return row ? toMember(row) : null;
  }

  async declineInvitation(memberId: string, email: string): Promise<OrgMember | null> {
    const pending = () =>
      this.db
        .table('org_members')
        .where({ id: memberId })
        .whereNull('user_id')
        .whereRaw('lower(email) = lower(?)', [email]);
    const row = await pending().first();
    if (!row) return null;
    await pending().delete();
    return toMember(row);
  }

  /**
   * Narrows a query on org_members to the rows this scope may use for person `userId` (the rule
   * the Postgres policies of m010 enforce too): everything in system work; otherwise the rows of
   * the scope's owners, and, in the person's own work, the person's own rows (`claim`: the
   * pending rows at the email of the person's user row).
   */
  private crossOwner(query: Knex.QueryBuilder, userId: string, claim = false): Knex.QueryBuilder {
    const owners = visibleOwners(this.db.scope);
    if (owners === null) return query;
    const self = scopeSelf(this.db.scope) === userId;
    return query.where((rule) => {
      rule.whereIn('org_members.org_id', [...owners]);
      if (!self) return;
      if (claim) {
        rule.orWhereRaw('lower(org_members.email) = (SELECT lower(users.email) FROM users WHERE users.id = ?)', [
          userId,
        ]);
      } else {
        rule.orWhere('org_members.user_id', userId);
      }
    });
  }
}

function toOrg(row: Row): Org {
  return { id: uuidOut(row.id), name: textOut(row.name), created_at: timeOut(row.created_at) };
}

function toMember(row: Row): OrgMember {
  return {
    id: uuidOut(row.id),
    org_id: uuidOut(row.org_id),
    user_id: uuidOutOrNull(row.user_id),
    email: textOut(row.email),
    role: roleOut(row.role),
    created_at: timeOut(row.created_at),
    joined_at: timeOutOrNull(row.joined_at),
    invited_by: uuidOutOrNull(row.invited_by),
  };
}

function roleOut(value: unknown): OrgRole {
  if (!isOrgRole(value)) throw new Error(`org_members holds an unknown role: ${String(value)}`);
  return value;
}
