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
import { scopeSelf } from '../dialects/scoping.js';
import { type Row, textOut, timeIn, timeInOrNull, timeOut, timeOutOrNull, uuidOut, uuidOutOrNull } from '../rows.js';
import type { TableName } from '../schema.js';
import { keysetPage } from './keysetPage.js';

/**
 * The tables an organization's records live in, children before parents: deleting an
 * organization deletes its rows from each in this order (the foreign keys between them do not
 * cascade), then the organization, whose memberships cascade.
 */
const OWNED_TABLES: readonly TableName[] = [
  'log_chunks',
  'plan_artifacts',
  'state_locks',
  'state_versions',
  'vine_components',
  'config_snapshots',
  'jobs',
  'vines',
  'cloud_identities',
  'vineyards',
  'workers',
];

/**
 * Organizations and members (m010). An organization row's owner is the organization itself, a
 * membership's its organization, so owner-scoped work of the organization sees them.
 *
 * Two methods cross owners by design, for the person they name: `membershipsOf(userId)` reads the
 * person's joined memberships, and `joinPending(email, userId)` claims the invitations at the
 * person's email. Both work in system scope, and in the person's own work (their member scope, or
 * their own owner scope without another actor): on Postgres the policies of m010 let a person read their
 * own membership rows and claim pending ones at the email of their own user row; on SQLite this
 * store applies the same rule.
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
    for (const table of OWNED_TABLES) await this.db.table(table).where({ owner_id: id }).delete();
    await this.db.table('orgs').where({ id }).delete();
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

  async joinPending(email: string, userId: string, at: string): Promise<OrgMember[]> {
    const rows: Row[] = await this.crossOwner(this.db.unscoped('org_members'), userId, true)
      .whereNull('user_id')
      .whereRaw('lower(email) = lower(?)', [email])
      .update({ user_id: userId, joined_at: timeIn(at) })
      .returning('*');
    // UPDATE .. RETURNING has no order: oldest invitation first, as the memory store returns them.
    const ordered = [...rows].sort(
      (a, b) => Date.parse(timeOut(a.created_at)) - Date.parse(timeOut(b.created_at)) || Number(a.seq) - Number(b.seq),
    );
    return ordered.map(toMember);
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
  };
}

function roleOut(value: unknown): OrgRole {
  if (!isOrgRole(value)) throw new Error(`org_members holds an unknown role: ${String(value)}`);
  return value;
}
