import type { Page, PageRequest } from '../domain/pagination.js';
import type { Org, OrgMember } from '../domain/records.js';
import type { OrgRole } from '../domain/roles.js';

/** One organization a person belongs to, with their role in it. */
export interface Membership {
  org_id: string;
  role: OrgRole;
}

/**
 * Organizations and their members (issue 12). Organizations are owners of their own rows (an
 * organization row's owner is itself); members rows belong to their organization.
 */
export interface OrgStore {
  /** `ConflictError('org_name_taken')` when the name is taken (names are unique, case-insensitively). */
  create(org: Org): Promise<Org>;
  get(id: string): Promise<Org | null>;
  /** `ConflictError('org_name_taken')`. */
  rename(id: string, name: string): Promise<Org>;
  delete(id: string): Promise<void>;
  /** The organizations the user has joined (not pending ones), each with the user's role. */
  membershipsOf(userId: string): Promise<Membership[]>;
  /** Members of an organization, joined and pending, oldest first. */
  pageMembers(orgId: string, request: PageRequest): Promise<Page<OrgMember>>;
  getMember(orgId: string, memberId: string): Promise<OrgMember | null>;
  /** `ConflictError('member_exists')` when the email already is (or is invited as) a member. */
  addMember(member: OrgMember): Promise<OrgMember>;
  setRole(orgId: string, memberId: string, role: OrgRole): Promise<OrgMember>;
  removeMember(orgId: string, memberId: string): Promise<void>;
  /** How many joined or pending members hold `owner`. */
  countOwners(orgId: string): Promise<number>;
  /**
   * Holds the organization until the unit of work ends (Postgres `SELECT … FOR UPDATE`; SQLite's
   * writers are serialised already), so concurrent changes of its owners go one after the other
   * and each sees the other's result.
   */
  lock(orgId: string): Promise<void>;
  /**
   * The pending memberships (invitations) at `email`, any case, oldest first, across
   * organizations: in system work, and in the person's own work for their own email.
   */
  invitationsAt(email: string): Promise<OrgMember[]>;
  /**
   * Makes the invitation `memberId` at `email` the user's (accepted at `at`); null when there is no
   * pending membership of that id at that email. In system work, and in the person's own work.
   */
  acceptInvitation(memberId: string, email: string, userId: string, at: string): Promise<OrgMember | null>;
  /** Deletes the invitation `memberId` at `email`; null when there is none (system work). */
  declineInvitation(memberId: string, email: string): Promise<OrgMember | null>;
}
