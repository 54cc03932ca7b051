import type { UserActor } from '../../domain/actors.js';
import { NotFoundError } from '../../domain/errors.js';
import type { OrgAction } from '../../domain/roles.js';
import { systemScope, type Scope } from '../../ports/UnitOfWork.js';
import { Access, authorizeIn } from '../../usecases/Access.js';
import type { CoreDeps } from '../../usecases/CoreDeps.js';

/** The owner a registry namespace names, and the scope to act in once `action` is allowed. */
export interface NamespaceOwner {
  ownerId: string;
  scope: Scope;
}

/**
 * A registry namespace is an organization's name (any case): its owner, when the actor is a
 * member allowed `action` (`InsufficientRoleError` otherwise); `404 namespace_not_found` when the
 * actor sees no organization of that name.
 */
export async function resolveNamespace(
  deps: Pick<CoreDeps, 'uow'>,
  actor: UserActor,
  namespace: string,
  action: OrgAction,
): Promise<NamespaceOwner> {
  const memberships = await new Access(deps).memberships(actor);
  const wanted = namespace.toLowerCase();
  const orgs = await deps.uow.read(systemScope, (stores) =>
    Promise.all(memberships.map((membership) => stores.orgs.get(membership.org_id))),
  );
  const org = orgs.find((candidate) => candidate?.name.toLowerCase() === wanted);
  if (!org) throw new NotFoundError('namespace', 'namespace_not_found', `no namespace ${namespace} that you may read`);
  return { ownerId: org.id, scope: authorizeIn(actor, memberships, org.id, action, 'org_not_found') };
}
