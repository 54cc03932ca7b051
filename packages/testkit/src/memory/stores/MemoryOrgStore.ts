import {
  ConflictError,
  type Membership,
  NotFoundError,
  type Org,
  type OrgMember,
  type OrgRole,
  type OrgStore,
  type Page,
  type PageRequest,
} from '@trellis/core';
import { copy, type MemoryState, oldestFirst, pageOldestFirst } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

/**
 * Organizations and members, with the visibility of the SQL stores: an organization row's owner
 * is the organization, a membership's owner is its organization. Two methods cross owners, as on
 * Postgres (m010): a person's own memberships (`membershipsOf`) are visible to the person's own
 * work (their member scope, or their owner scope without another actor), and there the person
 * reads (`invitationsAt`) and accepts the invitations at the email of their user row (issue 23).
 */
export class MemoryOrgStore implements OrgStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async create(org: Org): Promise<Org> {
    const { orgs } = this.tx.state;
    this.tx.checkWrite('orgs', org.id);
    const name = org.name.toLowerCase();
    for (const existing of orgs.values()) {
      if (existing.name.toLowerCase() === name) {
        throw new ConflictError('org_name_taken', `an organization named ${org.name} already exists`);
      }
    }
    if (orgs.has(org.id)) throw new ConflictError('org_exists', 'an organization with this id exists');
    orgs.set(org.id, copy(org));
    return copy(org);
  }

  async get(id: string): Promise<Org | null> {
    const org = this.visibleOrg(id);
    return org ? copy(org) : null;
  }

  async rename(id: string, name: string): Promise<Org> {
    const org = this.visibleOrg(id);
    if (!org) throw new NotFoundError('org');
    const lower = name.toLowerCase();
    for (const existing of this.tx.state.orgs.values()) {
      if (existing.id !== id && existing.name.toLowerCase() === lower) {
        throw new ConflictError('org_name_taken', `an organization named ${name} already exists`);
      }
    }
    org.name = name;
    return copy(org);
  }

  async delete(id: string): Promise<void> {
    if (!this.visibleOrg(id)) return;
    deleteOwnedRows(this.tx.state, id);
  }

  async membershipsOf(userId: string): Promise<Membership[]> {
    const mine = [...this.tx.state.orgMembers.values()].filter(
      (member) => member.user_id === userId && member.joined_at !== null && this.seesMembership(member),
    );
    return oldestFirst(mine, (member) => member.joined_at ?? member.created_at).map((member) => ({
      org_id: member.org_id,
      role: member.role,
    }));
  }

  async pageMembers(orgId: string, request: PageRequest): Promise<Page<OrgMember>> {
    if (!this.tx.sees(orgId)) return { items: [], next: null };
    return pageOldestFirst(
      this.tx.state.orgMembers,
      (member) => member.org_id === orgId,
      (member) => member.created_at,
      request,
    );
  }

  async getMember(orgId: string, memberId: string): Promise<OrgMember | null> {
    const member = this.visibleMember(orgId, memberId);
    return member ? copy(member) : null;
  }

  async addMember(member: OrgMember): Promise<OrgMember> {
    const { orgMembers, orgs } = this.tx.state;
    this.tx.checkWrite('org_members', member.org_id);
    if (!orgs.has(member.org_id)) throw missingReference();
    if (member.user_id !== null && !this.tx.state.users.has(member.user_id)) {
      throw missingReference();
    }
    const email = member.email.toLowerCase();
    for (const existing of orgMembers.values()) {
      if (existing.org_id === member.org_id && existing.email.toLowerCase() === email) {
        throw new ConflictError('member_exists', `${member.email} already is a member of this organization`);
      }
    }
    if (orgMembers.has(member.id)) throw new ConflictError('member_exists', 'a membership with this id exists');
    orgMembers.set(member.id, copy(member));
    return copy(member);
  }

  async setRole(orgId: string, memberId: string, role: OrgRole): Promise<OrgMember> {
    const member = this.visibleMember(orgId, memberId);
    if (!member) throw new NotFoundError('member');
    member.role = role;
    return copy(member);
  }

  async removeMember(orgId: string, memberId: string): Promise<void> {
    if (this.visibleMember(orgId, memberId)) this.tx.state.orgMembers.delete(memberId);
  }

  async countOwners(orgId: string): Promise<number> {
    if (!this.tx.sees(orgId)) return 0;
    let owners = 0;
    for (const member of this.tx.state.orgMembers.values()) {
      if (member.org_id === orgId && member.role === 'owner') owners += 1;
    }
    return owners;
  }

  async lock(_orgId: string): Promise<void> {
    // One memory transaction runs at a time: nothing to hold.
  }

  async invitationsAt(email: string): Promise<OrgMember[]> {
    const lower = email.toLowerCase();
    const pending = [...this.tx.state.orgMembers.values()].filter(
      (member) => member.user_id === null && member.email.toLowerCase() === lower && this.seesInvitation(member),
    );
    return oldestFirst(pending, (member) => member.created_at).map(copy);
  }

  async acceptInvitation(memberId: string, email: string, userId: string, at: string): Promise<OrgMember | null> {
    const member = this.tx.state.orgMembers.get(memberId);
    if (!member || member.user_id !== null || member.email.toLowerCase() !== email.toLowerCase()) return null;
    if (!this.mayJoin(member, userId)) return null;
    if (!this.tx.state.users.has(userId)) throw missingReference();
    member.user_id = userId;
    member.joined_at = at;
    return copy(member);
  }

  async declineInvitation(memberId: string, email: string): Promise<OrgMember | null> {
    const member = this.visibleMember(this.tx.state.orgMembers.get(memberId)?.org_id ?? '', memberId);
    if (!member || member.user_id !== null || member.email.toLowerCase() !== email.toLowerCase()) return null;
    this.tx.state.orgMembers.delete(memberId);
    return copy(member);
  }

  private visibleOrg(id: string): Org | undefined {
    const org = this.tx.state.orgs.get(id);
    return org && this.tx.sees(org.id) ? org : undefined;
  }

  private visibleMember(orgId: string, memberId: string): OrgMember | undefined {
    const member = this.tx.state.orgMembers.get(memberId);
    return member && member.org_id === orgId && this.tx.sees(orgId) ? member : undefined;
  }

  /** A membership row is visible to its organization's work, and to its person's own work. */
  private seesMembership(member: OrgMember): boolean {
    return this.tx.sees(member.org_id) || (member.user_id !== null && member.user_id === this.tx.self);
  }

  /** An invitation is visible to its organization's work, and to the person's own work at their own email. */
  private seesInvitation(member: OrgMember): boolean {
    if (this.tx.sees(member.org_id)) return true;
    const self = this.tx.self;
    const user = self === null ? undefined : this.tx.state.users.get(self);
    return user !== undefined && user.email.toLowerCase() === member.email.toLowerCase();
  }

  /**
   * Whether this unit of work may make a pending membership `userId`'s: system work and the
   * organization's work may; the person's own work may when the invitation is at the email of the person's user row (as the
   * Postgres policy of m010 requires).
   */
  private mayJoin(member: OrgMember, userId: string): boolean {
    if (this.tx.scope.kind === 'system' || this.tx.sees(member.org_id)) return true;
    if (this.tx.self !== userId) return false;
    const user = this.tx.state.users.get(userId);
    return user !== undefined && user.email.toLowerCase() === member.email.toLowerCase();
  }
}

/** What the SQL stores' foreign keys raise (store-sql errors.ts). */
function missingReference(): ConflictError {
  return new ConflictError('referenced_record_missing', 'the record refers to a record that does not exist');
}

/** Removes an organization and every row it owns (SQL deletes the same rows, owner by owner). */
function deleteOwnedRows(state: MemoryState, ownerId: string): void {
  const owned = <T extends { owner_id: string }>(table: Map<string, T>) => {
    for (const [key, row] of table) if (row.owner_id === ownerId) table.delete(key);
  };
  const jobIds = new Set([...state.jobs.values()].filter((job) => job.owner_id === ownerId).map((job) => job.id));
  state.logs = state.logs.filter((log) => log.owner_id !== ownerId);
  for (const jobId of jobIds) state.logUsage.delete(jobId);
  owned(state.planArtifacts);
  owned(state.planChanges);
  owned(state.configurationVersions);
  owned(state.mirrorArchives);
  owned(state.tfeRuns);
  owned(state.registryProviderPlatforms);
  owned(state.registryProviderVersions);
  owned(state.registryProviders);
  owned(state.registryGpgKeys);
  owned(state.jobs);
  owned(state.stateLocks);
  state.stateVersions = state.stateVersions.filter((version) => version.owner_id !== ownerId);
  owned(state.components);
  owned(state.vines);
  owned(state.cloudIdentities);
  owned(state.policies);
  for (const [key, version] of state.policyVersions) if (version.owner_id === ownerId) state.policyVersions.delete(key);
  for (const [key, entry] of state.outbox) if (entry.item.owner_id === ownerId) state.outbox.delete(key);
  owned(state.notifications);
  owned(state.vcsConnections);
  owned(state.moduleRepositories);
  owned(state.vcsComments);
  owned(state.vineyards);
  owned(state.workers);
  owned(state.apiTokens);
  for (const [key, member] of state.orgMembers) if (member.org_id === ownerId) state.orgMembers.delete(key);
  state.orgs.delete(ownerId);
}
