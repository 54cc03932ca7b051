import { type OrgAction, type OrgRole, roleAllows } from '@trellis/core';

/** An organization of the signed-in person, with their role in it. */
export interface OrgEntry {
  id: string;
  name: string;
  role: OrgRole;
}

/**
 * Where the signed-in person stands towards an owner of records: everything is theirs to do with
 * their own records; in an organization, what their role allows (core's one table). Pages ask it
 * which buttons to show; the API checks again on every request, so a hidden button is a courtesy,
 * never the protection.
 */
export class Standing {
  constructor(
    readonly userId: string,
    readonly orgs: readonly OrgEntry[],
  ) {}

  org(ownerId: string): OrgEntry | null {
    return this.orgs.find((org) => org.id === ownerId) ?? null;
  }

  may(ownerId: string, action: OrgAction): boolean {
    if (ownerId === this.userId) return true;
    const org = this.org(ownerId);
    return org !== null && roleAllows(org.role, action);
  }

  /** The organization's name for an organization's record; null for the person's own. */
  ownerName(ownerId: string): string | null {
    return this.org(ownerId)?.name ?? null;
  }
}

/** `?org_id=` of a list page as given: '' (everything), `personal`, or an organization's id. */
export function orgFilterOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The owner a filtered list shows, when it shows one: the person's id for `personal`. */
export function filteredOwner(standing: Standing, orgFilter: string): string | null {
  if (orgFilter === 'personal') return standing.userId;
  return standing.org(orgFilter) ? orgFilter : null;
}
