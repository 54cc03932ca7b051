import type { UserActor } from '../domain/actors.js';
import { NotFoundError } from '../domain/errors.js';
import type { OrgMember } from '../domain/records.js';
import type { OrgRole } from '../domain/roles.js';
import { isUuid } from '../domain/validation.js';
import { memberScope, ownerScope, systemScope } from '../ports/UnitOfWork.js';
import { recordAudit } from '../usecases/audit.js';
import { type CoreDeps, isoNow } from '../usecases/CoreDeps.js';
import type { OrgView } from './OrgUseCases.js';
import { refuseOrganizationToken } from '../usecases/personOnly.js';
import { announceApiCredentialsChanged } from '../tokens/ApiTokenCache.js';

/** An invitation as the invited person sees it. */
export interface InvitationView {
  /** The pending membership's id (what accept and decline name). */
  id: string;
  org_id: string;
  org_name: string;
  role: OrgRole;
  /** The email it was sent to: the caller's. */
  email: string;
  /** The email of the member who sent it; null when unknown (sent before invitations were recorded). */
  invited_by: string | null;
  created_at: string;
}

/**
 * Invitations to organizations (issue 23), from the invited person's side. An admin's
 * `POST /api/orgs/{id}/members` writes a pending membership at an email; whoever signs in with that
 * (verified) email sees it here and accepts it (then, and only then, they are a member) or
 * declines it (the pending membership goes). Only a person answers their invitations: an
 * organization token may not (`403 org_token_not_allowed`). Someone else's invitation, an accepted
 * one and an unknown id are all `404 invitation_not_found`.
 */
export class InvitationUseCases {
  constructor(private readonly deps: CoreDeps) {}

  /** `GET /api/invitations`: the caller's pending invitations, oldest first. */
  async list(user: UserActor): Promise<InvitationView[]> {
    refuseOrganizationToken(user, 'read invitations');
    const email = await this.emailOf(user);
    const pending = await this.deps.uow.read(ownerScope(user.userId), (stores) => stores.orgs.invitationsAt(email));
    if (pending.length === 0) return [];
    // The organizations' names and the inviters' emails: the caller sees no organization yet, so
    // these are read in system work, for the invitations found at the caller's own email only.
    return this.deps.uow.read(systemScope, async (stores) => {
      const views: InvitationView[] = [];
      for (const invitation of pending) {
        const org = await stores.orgs.get(invitation.org_id);
        if (!org) continue;
        const inviter = invitation.invited_by === null ? null : await stores.users.get(invitation.invited_by);
        views.push(invitationView(invitation, org.name, inviter?.email ?? null));
      }
      return views;
    });
  }

  /** `POST /api/invitations/{id}/accept`: the caller joins the organization with the invited role. */
  async accept(user: UserActor, id: unknown): Promise<OrgView> {
    refuseOrganizationToken(user, 'accept invitations');
    const invitation = await this.find(user, id);
    const now = isoNow(this.deps);
    // The person's own work over the organization they join: on Postgres the policy of m010 lets
    // them take the invitation at their own email, and once joined the organization's log is theirs to write.
    const { accepted, org } = await this.deps.uow.run(memberScope(user.userId, [invitation.org_id]), async (stores) => {
      const accepted = await stores.orgs.acceptInvitation(invitation.id, invitation.email, user.userId, now);
      if (!accepted) throw notFound();
      const org = await stores.orgs.get(accepted.org_id);
      if (!org) throw notFound();
      await recordAudit(stores, this.deps, user, {
        action: 'member.accept',
        target: { type: 'member', id: accepted.id },
        owner_id: accepted.org_id,
        details: { email: accepted.email, role: accepted.role },
      });
      return { accepted, org };
    });
    await announceApiCredentialsChanged(this.deps.events, org.id);
    return { id: org.id, name: org.name, role: accepted.role, created_at: org.created_at };
  }

  /** `POST /api/invitations/{id}/decline`: the pending membership goes; the organization's log says so. */
  async decline(user: UserActor, id: unknown): Promise<void> {
    refuseOrganizationToken(user, 'decline invitations');
    const invitation = await this.find(user, id);
    // System work, as adding one is: the caller is no member of the organization, and the
    // statement deletes only a pending membership at the caller's own email.
    await this.deps.uow.run(systemScope, async (stores) => {
      const declined = await stores.orgs.declineInvitation(invitation.id, invitation.email);
      if (!declined) throw notFound();
      await recordAudit(stores, this.deps, user, {
        action: 'member.decline',
        target: { type: 'member', id: declined.id },
        owner_id: declined.org_id,
        details: { email: declined.email, role: declined.role },
      });
    });
  }

  /** The caller's pending invitation of this id: `404 invitation_not_found` otherwise. */
  private async find(user: UserActor, id: unknown): Promise<OrgMember> {
    if (!isUuid(id)) throw notFound();
    const email = await this.emailOf(user);
    const pending = await this.deps.uow.read(ownerScope(user.userId), (stores) => stores.orgs.invitationsAt(email));
    const invitation = pending.find((candidate) => candidate.id === id.toLowerCase());
    if (!invitation) throw notFound();
    return invitation;
  }

  /** The caller's email as stored (verified when the user was made), not as a token carries it. */
  private async emailOf(user: UserActor): Promise<string> {
    const person = await this.deps.uow.read(ownerScope(user.userId), (stores) => stores.users.get(user.userId));
    if (!person) throw new NotFoundError('user');
    return person.email;
  }
}

function invitationView(invitation: OrgMember, orgName: string, invitedBy: string | null): InvitationView {
  return {
    id: invitation.id,
    org_id: invitation.org_id,
    org_name: orgName,
    role: invitation.role,
    email: invitation.email,
    invited_by: invitedBy,
    created_at: invitation.created_at,
  };
}

function notFound(): NotFoundError {
  return new NotFoundError('invitation');
}
