/**
 * Members as issue 23 makes them: an admin invites a person's email, the person accepts. Tests that
 * need a member of an organization (and are not about invitations) add one with these.
 */
import type { TrellisClient } from '@trellis/client';
import type { OrgRole, UseCases, UserActor } from '@trellis/core';

/** In-process: `admin` invites `person` (by their email) with `role`, `person` accepts. The membership id. */
export async function addAcceptedMember(
  useCases: UseCases,
  admin: UserActor,
  orgId: string,
  person: UserActor,
  role: OrgRole,
): Promise<string> {
  const invitation = await useCases.orgs.addMember(admin, orgId, { email: person.email, role });
  await useCases.invitations.accept(person, invitation.id);
  return invitation.id;
}

/** Over HTTP: `admin` invites `email` with `role`, the person signed in as `person` accepts. The membership id. */
export async function joinOrg(
  admin: TrellisClient,
  person: TrellisClient,
  orgId: string,
  email: string,
  role: OrgRole,
): Promise<string> {
  const invitation = await admin.addMember(orgId, { email, role });
  await person.acceptInvitation(invitation.id);
  return invitation.id;
}
