import type { UserActor } from '../domain/actors.js';
import { InsufficientRoleError, NotFoundError, UnauthorizedError, ValidationError } from '../domain/errors.js';
import { isUuid, requireUuid } from '../domain/validation.js';
import { LEAST_ROLE, lowerRole, type OrgAction, roleAllows } from '../domain/roles.js';
import type { Membership } from '../ports/OrgStore.js';
import { memberScope, ownerScope, type Scope, type Stores, systemScope, visibleOwners } from '../ports/UnitOfWork.js';
import type { CoreDeps } from './CoreDeps.js';

/** Which owners' records a list shows: `?org_id=<uuid>` (one organization) or `personal`. */
export type OwnerFilter = { kind: 'all' } | { kind: 'personal' } | { kind: 'org'; orgId: string };

/**
 * Who may do what with an owner's records (issue 12). Every use case that acts for a person asks
 * here: a personal record's owner is its user, who may do everything with it (unless the caller is
 * an organization token, which never sees personal records); an organization's records need a
 * membership, and a role the `LEAST_ROLE` table allows. Memberships are read at every request, so a
 * removed member loses access at once.
 */
export class Access {
  constructor(private readonly deps: Pick<CoreDeps, 'uow'>) {}

  /**
   * The organizations the actor acts in, with the role it acts with. An organization token acts
   * only in its organization, with the lower of its role and its creator's current role; when the
   * creator is no longer a member, nowhere. Those the API token of the request was read with
   * (`actor.memberships`), else read now.
   */
  async memberships(actor: UserActor): Promise<Membership[]> {
    const all = actor.memberships
      ? [...actor.memberships]
      : await this.deps.uow.read(systemScope, (stores) => stores.orgs.membershipsOf(actor.userId));
    const token = actor.apiToken;
    if (!token || token.orgId === null) return all;
    const own = all.find((membership) => membership.org_id === token.orgId);
    if (!own) return [];
    return [{ org_id: own.org_id, role: token.role === null ? own.role : lowerRole(token.role, own.role) }];
  }

  /**
   * The scope lists and look-ups read in: the person's own records and those of their
   * organizations; an organization token's only. A person in no organization reads as before, in
   * their own owner scope. Null when the filter leaves nothing to see (an organization token asked
   * for personal records).
   */
  async readScope(actor: UserActor, filter: OwnerFilter = { kind: 'all' }): Promise<Scope | null> {
    return scopeOf(actor, await this.memberships(actor), filter);
  }

  /**
   * The scope to act in on a record of `ownerId`: `NotFoundError(notFoundCode)` when the actor may
   * not see the owner's records at all, `InsufficientRoleError` when its role is too low.
   */
  async authorize(actor: UserActor, ownerId: string, action: OrgAction, notFoundCode: NotFoundCode): Promise<Scope> {
    if (ownerId === actor.userId && !actor.apiToken?.orgId) return ownerScope(actor.userId);
    return authorizeIn(actor, await this.memberships(actor), ownerId, action, notFoundCode);
  }

  /**
   * A record found among the owners the actor sees (`find` is asked owner by owner, the actor's own
   * first), the scope to act on it in once `action` is authorized on its owner, and the memberships
   * that decided it (for a use case that authorizes more on the same request).
   * `NotFoundError(notFoundCode)` when no visible owner has it.
   */
  async locate<T extends { owner_id: string }>(
    actor: UserActor,
    action: OrgAction,
    notFoundCode: NotFoundCode,
    find: (stores: Stores, ownerId: string) => Promise<T | null>,
  ): Promise<{ record: T; scope: Scope; memberships: Membership[] }> {
    return this.locateAmong(actor, await this.memberships(actor), action, notFoundCode, find);
  }

  /** `locate` with the actor's memberships already read. */
  private async locateAmong<T extends { owner_id: string }>(
    actor: UserActor,
    memberships: Membership[],
    action: OrgAction,
    notFoundCode: NotFoundCode,
    find: (stores: Stores, ownerId: string) => Promise<T | null>,
  ): Promise<{ record: T; scope: Scope; memberships: Membership[] }> {
    const readScope = scopeOf(actor, memberships, { kind: 'all' }) as Scope;
    const record = await this.deps.uow.read(readScope, async (stores) => {
      for (const ownerId of visibleOwners(readScope) ?? []) {
        const found = await find(stores, ownerId);
        if (found) return found;
      }
      return null;
    });
    if (!record) throw notFound(notFoundCode);
    return { record, scope: authorizeIn(actor, memberships, record.owner_id, action, notFoundCode), memberships };
  }

  /**
   * `locate` for work that writes: the record found among the owners the actor sees, `action`
   * authorized on its owner, then `work` with the record as read in the unit of work `run` opens in
   * that owner's scope. When the actor sees one owner only (a person in no organization, an
   * organization's token), that owner is known before anything is read, so the record is found
   * and authorized inside the same unit of work: one unit of work instead of two. Either way a
   * record that does not exist is `notFoundCode` whatever the role, and a role too low is refused
   * before `work` runs.
   */
  async runLocated<T extends { owner_id: string }, R>(
    actor: UserActor,
    action: OrgAction,
    notFoundCode: NotFoundCode,
    find: (stores: Stores, ownerId: string) => Promise<T | null>,
    run: (scope: Scope, work: (stores: Stores) => Promise<R>) => Promise<R>,
    work: (stores: Stores, record: T, scope: Scope) => Promise<R>,
  ): Promise<R> {
    const memberships = await this.memberships(actor);
    const owners = visibleOwners(scopeOf(actor, memberships, { kind: 'all' }) as Scope) ?? [];
    const only = owners.length === 1 ? (owners[0] as string) : null;
    // The one owner's scope is the one `authorizeIn` gives; its check waits until the record is found.
    const { ownerId, scope } =
      only === null
        ? await this.locateAmong(actor, memberships, action, notFoundCode, find).then((located) => ({
            ownerId: located.record.owner_id,
            scope: located.scope,
          }))
        : { ownerId: only, scope: ownerScope(only, actor.userId) };
    return run(scope, async (stores) => {
      const record = await find(stores, ownerId);
      if (!record) throw notFound(notFoundCode);
      if (only !== null) authorizeIn(actor, memberships, record.owner_id, action, notFoundCode);
      return work(stores, record, scope);
    });
  }

  /**
   * `locate`, then `view` of the record, in one read unit of work: the record is found among the
   * owners the actor sees, `action` is authorized on its owner (else `notFoundCode` or the role's
   * refusal, before `view` runs), then `view` reads what it needs in the same snapshot. For reads
   * polled often (a run's status, a plan's), one unit of work instead of two.
   */
  async readLocated<T extends { owner_id: string }, R>(
    actor: UserActor,
    action: OrgAction,
    notFoundCode: NotFoundCode,
    find: (stores: Stores, ownerId: string) => Promise<T | null>,
    view: (stores: Stores, record: T, memberships: readonly Membership[]) => Promise<R>,
  ): Promise<R> {
    const memberships = await this.memberships(actor);
    const readScope = scopeOf(actor, memberships, { kind: 'all' }) as Scope;
    return this.deps.uow.read(readScope, async (stores) => {
      for (const ownerId of visibleOwners(readScope) ?? []) {
        const found = await find(stores, ownerId);
        if (!found) continue;
        authorizeIn(actor, memberships, found.owner_id, action, notFoundCode);
        return view(stores, found, memberships);
      }
      throw notFound(notFoundCode);
    });
  }

  /** The scope to create a record in: the actor's own (no `org_id`) or an organization's. */
  async ownerFor(actor: UserActor, orgId: unknown, action: OrgAction): Promise<{ ownerId: string; scope: Scope }> {
    if (orgId === undefined || orgId === null) {
      if (actor.apiToken?.orgId) {
        // An organization token creates in its organization.
        const ownerId = actor.apiToken.orgId;
        return { ownerId, scope: await this.authorize(actor, ownerId, action, 'org_not_found') };
      }
      return { ownerId: actor.userId, scope: ownerScope(actor.userId) };
    }
    const ownerId = requireUuid(orgId, 'org_id');
    return { ownerId, scope: await this.authorize(actor, ownerId, action, 'org_not_found') };
  }
}

/** `authorize` over memberships already read (a use case that needs both reads them once). */
export function authorizeIn(
  actor: UserActor,
  memberships: readonly Membership[],
  ownerId: string,
  action: OrgAction,
  notFoundCode: NotFoundCode,
): Scope {
  const orgToken = Boolean(actor.apiToken?.orgId);
  if (ownerId === actor.userId && !orgToken) return ownerScope(actor.userId);
  const membership = memberships.find((candidate) => candidate.org_id === ownerId);
  if (!membership) throw notFound(notFoundCode);
  if (!roleAllows(membership.role, action)) throw new InsufficientRoleError(LEAST_ROLE[action], membership.role);
  return ownerScope(ownerId, actor.userId);
}

/**
 * Whether the actor may take `action` on `ownerId`'s records (memberships already read): what a
 * view that shows some fields only to those who manage them asks (issue 23). Never throws.
 */
export function mayAct(
  actor: UserActor,
  memberships: readonly Membership[],
  ownerId: string,
  action: OrgAction,
): boolean {
  if (ownerId === actor.userId && !actor.apiToken?.orgId) return true;
  const membership = memberships.find((candidate) => candidate.org_id === ownerId);
  return membership !== undefined && roleAllows(membership.role, action);
}

/** The read scope of `readScope` over memberships already read. */
export function scopeOf(actor: UserActor, memberships: readonly Membership[], filter: OwnerFilter): Scope | null {
  const orgToken = actor.apiToken?.orgId ?? null;
  if (orgToken !== null) {
    if (memberships.length === 0) throw new UnauthorizedError('invalid_token', 'the bearer token is not valid');
    if (filter.kind === 'personal') return null;
    if (filter.kind === 'org' && filter.orgId !== orgToken) throw notFound('org_not_found');
    return ownerScope(orgToken, actor.userId);
  }
  switch (filter.kind) {
    case 'personal':
      return ownerScope(actor.userId);
    case 'org':
      if (!memberships.some((membership) => membership.org_id === filter.orgId)) throw notFound('org_not_found');
      return ownerScope(filter.orgId, actor.userId);
    case 'all':
      return memberships.length === 0
        ? ownerScope(actor.userId)
        : memberScope(
            actor.userId,
            memberships.map((membership) => membership.org_id),
          );
  }
}

/** The 404 of each kind of record a person looks up; the codes are literal for the registry's check. */
const NOT_FOUND = {
  org_not_found: () => new NotFoundError('org'),
  vineyard_not_found: () => new NotFoundError('vineyard'),
  configuration_not_found: () => new NotFoundError('configuration'),
  job_not_found: () => new NotFoundError('job'),
  worker_not_found: () => new NotFoundError('worker'),
  notification_not_found: () => new NotFoundError('notification'),
  policy_not_found: () => new NotFoundError('policy'),
} as const;

export type NotFoundCode = keyof typeof NOT_FOUND;

function notFound(code: NotFoundCode): NotFoundError {
  return NOT_FOUND[code]();
}

/** `?org_id=`: absent (everything the caller sees), `personal`, or one organization's id. */
export function parseOwnerFilter(value: unknown): OwnerFilter {
  if (value === undefined || value === null || value === '') return { kind: 'all' };
  if (value === 'personal') return { kind: 'personal' };
  if (isUuid(value)) return { kind: 'org', orgId: value.toLowerCase() };
  throw new ValidationError('org_id must be an organization id or "personal"', [
    { path: 'org_id', message: 'must be a UUID or "personal"' },
  ]);
}
