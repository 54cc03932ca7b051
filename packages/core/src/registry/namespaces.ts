import type { UserActor } from '../domain/actors.js';
import { NotFoundError, ValidationError } from '../domain/errors.js';
import type { Scope, Stores } from '../ports/UnitOfWork.js';
import { TfeOrganizations } from '../tfe/TfeOrganizations.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';

/**
 * What a person may do in a namespace of the private registry (issue 28): read (viewer), publish
 * (operator), deprecate, delete and manage keys (admin). The roles are `domain/roles.ts`'s.
 */
export type RegistryAction = 'registry.read' | 'registry.publish' | 'registry.manage';

/** A namespace of the registry resolved to its owner: a Trellis organization, or a person. */
export interface RegistryNamespace {
  /** The name the namespace goes by (an organization's own spelling, or `u-<12 hex>`). */
  name: string;
  ownerId: string;
  /** The scope to act in, once the action is authorized. */
  scope: Scope;
}

/** A namespace as the registry protocols spell it (an organization name or a personal namespace). */
const NAMESPACE = /^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,62}[A-Za-z0-9])?$/;

/** `400 validation_failed` unless `value` can be a namespace (checked before any look-up). */
export function requireNamespaceName(value: unknown, field = 'namespace'): string {
  if (typeof value !== 'string' || !NAMESPACE.test(value)) {
    throw new ValidationError(`${field} must be an organization name or your personal namespace`, [
      {
        path: field,
        message: 'must be 1 to 64 letters, digits, "-" or "_", starting and ending with a letter or digit',
      },
    ]);
  }
  return value;
}

/**
 * Registry namespaces ↔ owners, for every part of the registry (modules, providers, the mirror):
 * the namespace of the Terraform Cloud protocol (`TfeOrganizations`), so a module source
 * `<host>/acme/vpc/aws` names the organization `acme`, as on HCP Terraform. A namespace the actor
 * does not belong to is `404 namespace_not_found` (never revealing it exists); a role too low for
 * the action is `403 insufficient_role`.
 */
export class RegistryNamespaces {
  private readonly orgs: TfeOrganizations;

  constructor(deps: Pick<CoreDeps, 'uow'>) {
    this.orgs = new TfeOrganizations(deps);
  }

  async resolve(actor: UserActor, namespace: unknown, action: RegistryAction): Promise<RegistryNamespace> {
    const name = requireNamespaceName(namespace);
    try {
      return await this.orgs.resolve(actor, name, action);
    } catch (error) {
      if (error instanceof NotFoundError) throw namespaceNotFound(name);
      throw error;
    }
  }

  /** The name an owner's namespace goes by (an organization's current name, or a person's `u-…`). */
  nameOf(stores: Stores, ownerId: string): Promise<string> {
    return this.orgs.nameOf(stores, ownerId);
  }
}

export function namespaceNotFound(name: string): NotFoundError {
  return new NotFoundError(
    'namespace',
    'namespace_not_found',
    `no registry namespace ${JSON.stringify(name)} (an organization you belong to, or your personal namespace)`,
  );
}
