import type { UserActor } from '../domain/actors.js';
import { NotFoundError } from '../domain/errors.js';
import { type OrgAction, roleAllows } from '../domain/roles.js';
import type { Membership } from '../ports/OrgStore.js';
import type { Scope, Stores } from '../ports/UnitOfWork.js';
import { systemScope } from '../ports/UnitOfWork.js';
import { Access, authorizeIn, type NotFoundCode } from '../usecases/Access.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';
import { personalNamespace } from './names.js';

/** An organization of the Terraform Cloud protocol: a Trellis owner (an organization or a person). */
export interface TfeOrganization {
  name: string;
  ownerId: string;
  /** The scope to act in, once the action is authorized. */
  scope: Scope;
}

/**
 * Names ↔ owners (issue 26): a Trellis organization by its name (case-insensitively), a person's
 * own records by their personal namespace. An organization the actor does not belong to is a
 * `404`, like every record of another owner; a role too low for the action is `403`.
 */
export class TfeOrganizations {
  readonly access: Access;

  constructor(private readonly deps: Pick<CoreDeps, 'uow'>) {
    this.access = new Access(deps);
  }

  async resolve(actor: UserActor, name: unknown, action: OrgAction): Promise<TfeOrganization> {
    if (typeof name !== 'string' || name === '') throw notFound();
    if (name.toLowerCase() === personalNamespace(actor.userId) && !actor.apiToken?.orgId) {
      return {
        name: personalNamespace(actor.userId),
        ownerId: actor.userId,
        scope: { kind: 'owner', ownerId: actor.userId },
      };
    }
    const memberships = await this.access.memberships(actor);
    const orgs = await this.deps.uow.read(systemScope, async (stores) =>
      Promise.all(memberships.map((membership) => stores.orgs.get(membership.org_id))),
    );
    const org = orgs.find((candidate) => candidate?.name.toLowerCase() === name.toLowerCase());
    if (!org) throw notFound();
    return { name: org.name, ownerId: org.id, scope: authorizeIn(actor, memberships, org.id, action, 'org_not_found') };
  }

  /** The name an owner goes by, for the `organization` of what is answered. */
  async nameOf(stores: Stores, ownerId: string): Promise<string> {
    const org = await stores.orgs.get(ownerId);
    return org ? org.name : personalNamespace(ownerId);
  }

  /** What the actor may do in an owner's records (answers' `permissions`). */
  async abilities(
    actor: UserActor,
    ownerId: string,
  ): Promise<{ manage: boolean; useState: boolean; forceUnlock: boolean; run: boolean }> {
    if (ownerId === actor.userId && !actor.apiToken?.orgId) {
      return { manage: true, useState: true, forceUnlock: true, run: true };
    }
    const membership = (await this.access.memberships(actor)).find((candidate) => candidate.org_id === ownerId);
    const may = (action: OrgAction) => membership !== undefined && roleAllows(membership.role, action);
    return {
      manage: may('vineyards.manage'),
      useState: may('state.use'),
      forceUnlock: may('state.force_unlock'),
      run: may('jobs.run'),
    };
  }

  /** A record found among the owners the actor sees, and the scope to act on it in. */
  locate<T extends { owner_id: string }>(
    actor: UserActor,
    action: OrgAction,
    notFoundCode: NotFoundCode,
    find: (stores: Stores, ownerId: string) => Promise<T | null>,
  ): Promise<{ record: T; scope: Scope; memberships: Membership[] }> {
    return this.access.locate(actor, action, notFoundCode, find);
  }
}

function notFound(): NotFoundError {
  return new NotFoundError('org');
}
