/**
 * Organizations and roles (issue 12): the one table of who may do what in an organization's
 * records. Use cases check it through `requireRole`; nothing else decides.
 *
 * A personal record's owner is its user, who may do everything with it. In an organization each
 * member has one role; each role may do what the roles below it may do, and more.
 */

/** The roles of an organization's members, least first. */
export const ORG_ROLES = ['viewer', 'operator', 'admin', 'owner'] as const;
export type OrgRole = (typeof ORG_ROLES)[number];

/** Every action on an organization's records, with the least role that may take it. */
export const LEAST_ROLE = {
  /** See the organization, its members, vineyards, vines, jobs, logs and agents. */
  read: 'viewer',
  /** Queue (plan, deploy, destroy) and cancel jobs. */
  'jobs.run': 'operator',
  /** Approve or reject plans (issue 15). */
  'plans.approve': 'operator',
  /** Read and write the engine state of a vine, and download plan files (they may hold secrets). */
  'state.use': 'operator',
  /** Make an old state version the current state again (issue 29: the web's rollback is an admin's). */
  'state.rollback': 'admin',
  /** Release a vine's state lock whoever holds it (issue 26). */
  'state.force_unlock': 'admin',
  /** Create, change and delete vineyards and vines. */
  'vineyards.manage': 'admin',
  /** Override a plan's failed mandatory policies, so it may be deployed (issue 15). */
  'plans.override': 'admin',
  /** Register and remove the organization's agents. */
  'agents.manage': 'admin',
  /** Add, change and remove members who are not owners. */
  'members.manage': 'admin',
  /** Create and revoke the organization's API tokens. */
  'tokens.manage': 'admin',
  /** Create, test and delete the organization's notifications. */
  'notifications.manage': 'admin',
  /** Create, change and delete the organization's policies (issue 15). */
  'policies.manage': 'admin',
  /** Read the organization's audit log. */
  'audit.read': 'admin',
  /** Read the organization's private registry: modules, providers and its provider mirror (issue 28). */
  'registry.read': 'viewer',
  /** Publish module and provider versions, and push providers into the mirror. */
  'registry.publish': 'operator',
  /** Deprecate and delete published versions, and manage the registry's signing keys. */
  'registry.manage': 'admin',
  /** Rename the organization. */
  'org.rename': 'admin',
  /** Make, demote and remove owners. */
  'owners.manage': 'owner',
  /** Delete the organization. */
  'org.delete': 'owner',
} as const satisfies Record<string, OrgRole>;

export type OrgAction = keyof typeof LEAST_ROLE;

export function isOrgRole(value: unknown): value is OrgRole {
  return typeof value === 'string' && (ORG_ROLES as readonly string[]).includes(value);
}

/** How high a role ranks: a role may do what every role of a lower rank may. */
export function roleRank(role: OrgRole): number {
  return ORG_ROLES.indexOf(role);
}

/** Whether a member with `role` may take `action`. */
export function roleAllows(role: OrgRole, action: OrgAction): boolean {
  return roleRank(role) >= roleRank(LEAST_ROLE[action]);
}

/** The lower of two roles: what an organization token may do is capped by its creator's role. */
export function lowerRole(a: OrgRole, b: OrgRole): OrgRole {
  return roleRank(a) <= roleRank(b) ? a : b;
}
