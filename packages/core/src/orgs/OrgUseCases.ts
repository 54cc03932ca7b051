import type { UserActor } from '../domain/actors.js';
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors.js';
import {
  type Page,
  type PageQuery,
  type PageRequest,
  type PageResult,
  pageRequest,
  pageResult,
} from '../domain/pagination.js';
import type { Org, OrgMember } from '../domain/records.js';
import { isOrgRole, ORG_ROLES, type OrgRole } from '../domain/roles.js';
import { requireName, requireUuid } from '../domain/validation.js';
import type { Membership } from '../ports/OrgStore.js';
import { memberScope, type Scope, type Stores, systemScope } from '../ports/UnitOfWork.js';
import { recordAudit } from '../usecases/audit.js';
import { Access, authorizeIn } from '../usecases/Access.js';
import { announce, type CoreDeps, isoNow } from '../usecases/CoreDeps.js';
import { refuseOrganizationToken } from '../usecases/personOnly.js';
import { normalizeEmail } from '../usecases/users.js';
import { announceApiCredentialsChanged } from '../tokens/ApiTokenCache.js';

/** An organization as its member sees it: with their role. */
export interface OrgView extends Org {
  role: OrgRole;
}

export interface OrgMemberView extends OrgMember {
  /** `pending`: invited, not accepted yet (the person sees nothing of the organization). */
  status: 'active' | 'pending';
}

function orgView(org: Org, role: OrgRole): OrgView {
  return { id: org.id, name: org.name, role, created_at: org.created_at };
}

function memberView(member: OrgMember): OrgMemberView {
  return { ...member, status: member.user_id === null ? 'pending' : 'active' };
}

function requireRole(value: unknown): OrgRole {
  if (!isOrgRole(value)) {
    throw new ValidationError(`role must be one of ${ORG_ROLES.join(', ')}`, [
      { path: 'role', message: `must be one of ${ORG_ROLES.join(', ')}` },
    ]);
  }
  return value;
}

/**
 * Organizations and their members (issue 12). The creator of an organization is its first owner;
 * admins manage members who are not owners, only owners manage owners, and an organization always
 * keeps one owner.
 */
export class OrgUseCases {
  private readonly access: Access;

  constructor(private readonly deps: CoreDeps) {
    this.access = new Access(deps);
  }

  /** `POST /api/orgs`: the caller becomes its owner. A person's act: never an organization token's. */
  async create(user: UserActor, input: { name: unknown }): Promise<OrgView> {
    refuseOrganizationToken(user, 'create organizations');
    const name = requireName(input.name, 'name');
    const now = isoNow(this.deps);
    const org: Org = { id: this.deps.random.uuid(), name, created_at: now };
    // The organization precedes its ownership: nothing is anyone's yet, so this is system work.
    const created = await this.deps.uow.run(systemScope, async (stores) => {
      const person = await stores.users.get(user.userId);
      if (!person) throw new NotFoundError('user');
      const saved = await stores.orgs.create(org);
      await stores.orgs.addMember({
        id: this.deps.random.uuid(),
        org_id: saved.id,
        user_id: person.id,
        email: person.email,
        role: 'owner',
        created_at: now,
        joined_at: now,
        invited_by: null,
      });
      await recordAudit(stores, this.deps, user, {
        action: 'org.create',
        target: { type: 'org', id: saved.id },
        owner_id: saved.id,
        details: { name },
      });
      return saved;
    });
    // The creator's API tokens now act in it too.
    await announceApiCredentialsChanged(this.deps.events, created.id);
    return orgView(created, 'owner');
  }

  /**
   * `GET /api/orgs`: the caller's organizations, newest first. A person belongs to few, so the page
   * is cut from all of them; the cursor's sequence is the position among organizations created at
   * the same instant (ordered by id).
   */
  async list(user: UserActor, query: PageQuery = {}): Promise<PageResult<OrgView>> {
    const request = pageRequest(query, this.deps.settings.pageLimits);
    const memberships = await this.access.memberships(user);
    const orgs = await this.deps.uow.read(systemScope, async (stores) => {
      const found: OrgView[] = [];
      for (const membership of memberships) {
        const org = await stores.orgs.get(membership.org_id);
        if (org) found.push(orgView(org, membership.role));
      }
      return found;
    });
    orgs.sort((a, b) =>
      a.created_at === b.created_at ? b.id.localeCompare(a.id) : a.created_at < b.created_at ? 1 : -1,
    );
    const keyed = orgs.map((org, index) => ({
      org,
      key: {
        at: org.created_at,
        seq: orgs.slice(0, index).filter((other) => other.created_at === org.created_at).length,
      },
    }));
    const after = request.after;
    const rest =
      after === undefined
        ? keyed
        : keyed.filter(({ key }) => key.at < after.at || (key.at === after.at && key.seq > after.seq));
    const items = rest.slice(0, request.limit);
    const last = items[items.length - 1];
    const next = rest.length > request.limit && last !== undefined ? last.key : null;
    return pageResult({ items: items.map(({ org }) => org), next }, request, (org) => org);
  }

  async get(user: UserActor, id: unknown): Promise<OrgView> {
    const { org, membership } = await this.find(user, id);
    return orgView(org, membership.role);
  }

  /** `PATCH /api/orgs/{id}` (admins). */
  async rename(user: UserActor, id: unknown, input: { name: unknown }): Promise<OrgView> {
    const name = requireName(input.name, 'name');
    const { org, membership, scope } = await this.find(user, id, 'org.rename');
    const renamed = await this.deps.uow.run(scope, async (stores) => {
      const saved = await stores.orgs.rename(org.id, name);
      await recordAudit(stores, this.deps, user, {
        action: 'org.rename',
        target: { type: 'org', id: org.id },
        owner_id: org.id,
        details: { name_before: org.name, name },
      });
      return saved;
    });
    return orgView(renamed, membership.role);
  }

  /**
   * `DELETE /api/orgs/{id}` (owners): refused with `409 org_busy` while a job of the organization is
   * queued or running; otherwise the organization goes with every record it owns (issue 23: its
   * notifications, policies and API tokens too), in one unit of work over the person's records and
   * the organization's, so on Postgres row-level security binds every statement. The deletion is
   * recorded in the organization's log (before its last member goes) and in the person's own (the
   * one that stays readable). Its agents' cached credentials are dropped on every replica.
   */
  async delete(user: UserActor, id: unknown): Promise<void> {
    const { org } = await this.find(user, id, 'org.delete');
    const { files, workers } = await this.deps.uow.run(memberScope(user.userId, [org.id]), async (stores) => {
      await stores.orgs.lock(org.id);
      const [queued, running] = await Promise.all([
        stores.jobs.list(org.id, { status: 'QUEUED' }),
        stores.jobs.list(org.id, { status: 'PROCESSING' }),
      ]);
      if (queued.length + running.length > 0) {
        throw new ConflictError('org_busy', 'the organization has queued or running jobs; cancel them first');
      }
      const files = await this.artifactKeysOf(stores, org.id);
      const workers = await stores.workers.list(org.id);
      const details = { name: org.name, ...(await ownedCounts(stores, org.id)), workers: workers.length };
      const entry = { action: 'org.delete', target: { type: 'org', id: org.id }, details } as const;
      await recordAudit(stores, this.deps, user, { ...entry, owner_id: org.id });
      await stores.orgs.delete(org.id);
      await recordAudit(stores, this.deps, user, { ...entry, owner_id: user.userId });
      return { files, workers };
    });
    for (const worker of workers) {
      await announce(this.deps.events, { type: 'worker_credentials_changed', owner_id: org.id, worker_id: worker.id });
    }
    await announceApiCredentialsChanged(this.deps.events, org.id);
    // The rows are gone; their files (plans, states: they may hold secrets) go after them.
    for (const key of files) {
      try {
        await this.deps.artifacts.delete(key);
      } catch {
        // Deliberately ignored: nothing refers to the file any more; an operator may sweep it.
      }
    }
  }

  /** The object names of the plan files, state versions, configuration versions, module tarballs and provider zips an owner's records refer to. */
  private async artifactKeysOf(stores: Stores, ownerId: string): Promise<string[]> {
    const keys: string[] = [];
    for (const vine of await stores.vines.list(ownerId)) {
      for (const version of await stores.states.listVersions(ownerId, vine.id)) keys.push(version.storage_key);
    }
    keys.push(...(await stores.configurationVersions.storageKeys(ownerId)));
    keys.push(...(await stores.mirror.storageKeys(ownerId)));
    keys.push(...(await stores.registryModules.storageKeys(ownerId)));
    keys.push(...(await stores.registryProviders.storageKeys(ownerId)));
    for (const job of await stores.jobs.list(ownerId)) {
      if (job.job_type !== 'PLAN') continue;
      const plan = await stores.planArtifacts.get(ownerId, job.id);
      if (plan) keys.push(plan.storage_key);
      const changes = await stores.planArtifacts.getChanges(ownerId, job.id);
      if (changes) keys.push(changes.storage_key);
    }
    return keys;
  }

  /**
   * `POST /api/orgs/{id}/members`: an invitation (issue 23). Nobody becomes a member by someone
   * else's act: the person of that email sees the invitation once signed in with it (now or later)
   * and accepts or declines it (`InvitationUseCases`); until then the membership is pending and
   * shows them nothing of the organization.
   */
  async addMember(user: UserActor, id: unknown, input: { email: unknown; role: unknown }): Promise<OrgMemberView> {
    if (typeof input.email !== 'string') {
      throw new ValidationError('email must be a string', [{ path: 'email', message: 'must be a string' }]);
    }
    const email = normalizeEmail(input.email);
    const role = requireRole(input.role);
    const { org, scope } = await this.find(user, id, role === 'owner' ? 'owners.manage' : 'members.manage');
    const now = isoNow(this.deps);
    const added = await this.deps.uow.run(scope, async (stores) => {
      const member = await stores.orgs.addMember({
        id: this.deps.random.uuid(),
        org_id: org.id,
        user_id: null,
        email,
        role,
        created_at: now,
        joined_at: null,
        invited_by: user.userId,
      });
      await recordAudit(stores, this.deps, user, {
        action: 'member.add',
        target: { type: 'member', id: member.id },
        owner_id: org.id,
        details: { email, role },
      });
      return member;
    });
    return memberView(added);
  }

  /** `GET /api/orgs/{id}/members`: joined and pending, oldest first (any member). */
  async listMembers(user: UserActor, id: unknown, query: PageQuery = {}): Promise<PageResult<OrgMemberView>> {
    const request = pageRequest(query, this.deps.settings.pageLimits);
    const { org, scope } = await this.find(user, id);
    const page = await this.deps.uow.read(scope, (stores) => stores.orgs.pageMembers(org.id, request));
    return pageResult(page, request, memberView);
  }

  /** `PATCH /api/orgs/{id}/members/{member}`: owners are made and demoted by owners only. */
  async setMemberRole(
    user: UserActor,
    id: unknown,
    memberId: unknown,
    input: { role: unknown },
  ): Promise<OrgMemberView> {
    const role = requireRole(input.role);
    const { org, memberships } = await this.find(user, id);
    const target = await this.member(org.id, memberId, memberships, user);
    const touchesOwner = role === 'owner' || target.role === 'owner';
    const scope = authorizeIn(
      user,
      memberships,
      org.id,
      touchesOwner ? 'owners.manage' : 'members.manage',
      'org_not_found',
    );
    const updated = await this.deps.uow.run(scope, async (stores) => {
      // Changes of an organization's owners go one at a time: two owners demoting each other at
      // once must not both see the other still an owner (issue 23).
      await stores.orgs.lock(org.id);
      const current = await this.requireMember(stores, org.id, target.id);
      if (current.role === 'owner' && role !== 'owner') await this.keepAnOwner(stores, org.id, current);
      const saved = await stores.orgs.setRole(org.id, current.id, role);
      await recordAudit(stores, this.deps, user, {
        action: 'member.set_role',
        target: { type: 'member', id: current.id },
        owner_id: org.id,
        details: { email: current.email, role_before: current.role, role },
      });
      return saved;
    });
    await announceApiCredentialsChanged(this.deps.events, org.id);
    return memberView(updated);
  }

  /** `DELETE /api/orgs/{id}/members/{member}`: also how a member leaves (their own membership). */
  async removeMember(user: UserActor, id: unknown, memberId: unknown): Promise<void> {
    const { org, memberships } = await this.find(user, id);
    const target = await this.member(org.id, memberId, memberships, user);
    const leaving = target.user_id === user.userId && !user.apiToken?.orgId;
    const scope = authorizeIn(
      user,
      memberships,
      org.id,
      leaving ? 'read' : target.role === 'owner' ? 'owners.manage' : 'members.manage',
      'org_not_found',
    );
    await this.deps.uow.run(scope, async (stores) => {
      await stores.orgs.lock(org.id);
      const current = await this.requireMember(stores, org.id, target.id);
      if (current.role === 'owner') await this.keepAnOwner(stores, org.id, current);
      // Recorded first: once a member who leaves is gone, the organization's log is no longer
      // theirs to write (on Postgres row-level security reads the membership live).
      await recordAudit(stores, this.deps, user, {
        action: 'member.remove',
        target: { type: 'member', id: current.id },
        owner_id: org.id,
        details: { email: current.email, role: current.role },
      });
      await stores.orgs.removeMember(org.id, current.id);
    });
    await announceApiCredentialsChanged(this.deps.events, org.id);
  }

  /** The organization, if the actor is a member (else `404 org_not_found`), authorized for `action`. */
  private async find(
    user: UserActor,
    id: unknown,
    action: 'read' | 'org.rename' | 'org.delete' | 'members.manage' | 'owners.manage' = 'read',
  ): Promise<{ org: Org; membership: Membership; memberships: Membership[]; scope: Scope }> {
    const notFound = () => new NotFoundError('org');
    if (typeof id !== 'string') throw notFound();
    let orgId: string;
    try {
      orgId = requireUuid(id, 'id');
    } catch {
      throw notFound();
    }
    const memberships = await this.access.memberships(user);
    const membership = memberships.find((candidate) => candidate.org_id === orgId);
    if (!membership) throw notFound();
    const scope = authorizeIn(user, memberships, orgId, action, 'org_not_found');
    const org = await this.deps.uow.read(scope, (stores) => stores.orgs.get(orgId));
    if (!org) throw notFound();
    return { org, membership, memberships, scope };
  }

  private async member(
    orgId: string,
    memberId: unknown,
    memberships: Membership[],
    user: UserActor,
  ): Promise<OrgMember> {
    const notFound = () => new NotFoundError('member');
    if (typeof memberId !== 'string') throw notFound();
    let id: string;
    try {
      id = requireUuid(memberId, 'member_id');
    } catch {
      throw notFound();
    }
    const scope = authorizeIn(user, memberships, orgId, 'read', 'org_not_found');
    const member = await this.deps.uow.read(scope, (stores) => stores.orgs.getMember(orgId, id));
    if (!member) throw notFound();
    return member;
  }

  private async requireMember(stores: Stores, orgId: string, memberId: string): Promise<OrgMember> {
    const member = await stores.orgs.getMember(orgId, memberId);
    if (!member) throw new NotFoundError('member');
    return member;
  }

  /**
   * Before a joined owner is demoted or removed: `409 last_owner` unless another joined owner stays
   * (a pending invitation cannot act, so it does not count).
   */
  private async keepAnOwner(stores: Stores, orgId: string, leaving: OrgMember): Promise<void> {
    if (leaving.user_id === null) return;
    let joinedOwners = 0;
    let request: PageRequest = { limit: 200 };
    for (;;) {
      const page = await stores.orgs.pageMembers(orgId, request);
      joinedOwners += page.items.filter((member) => member.role === 'owner' && member.user_id !== null).length;
      if (page.next === null) break;
      request = { limit: 200, after: page.next };
    }
    if (joinedOwners <= 1) {
      throw new ConflictError('last_owner', 'an organization keeps at least one owner; make another owner first');
    }
  }
}

/** How many notifications, policies and API tokens an owner has (what deleting it takes along). */
async function ownedCounts(
  stores: Stores,
  ownerId: string,
): Promise<{ vines: number; notifications: number; policies: number; api_tokens: number }> {
  const count = async (page: (request: PageRequest) => Promise<Page<unknown>>): Promise<number> => {
    let total = 0;
    let request: PageRequest = { limit: 200 };
    for (;;) {
      const found = await page(request);
      total += found.items.length;
      if (found.next === null) return total;
      request = { limit: 200, after: found.next };
    }
  };
  return {
    vines: (await stores.vines.list(ownerId)).length,
    notifications: await count((request) => stores.notifications.page(ownerId, request)),
    policies: await count((request) => stores.policies.page(ownerId, request)),
    api_tokens: await count((request) => stores.apiTokens.page(ownerId, request)),
  };
}
