import type { InvitationView, TrellisClient } from '@trellis/client';
import { CliError } from '../../errors.js';

/**
 * The caller's pending invitation that `what` names: an invitation id, or the name of the
 * organization it is to (any case). The invitee is no member yet, so organizations are looked up
 * among the invitations, never with `trellis orgs list`.
 */
export async function findInvitation(client: TrellisClient, what: string): Promise<InvitationView> {
  const invitations = await client.listInvitations();
  const lower = what.toLowerCase();
  const found =
    invitations.find((invitation) => invitation.id === lower) ??
    invitations.find((invitation) => invitation.org_name.toLowerCase() === lower);
  if (found) return found;
  const pending =
    invitations.length === 0
      ? 'you have no pending invitation'
      : `your pending invitations are to ${invitations.map((invitation) => invitation.org_name).join(', ')}`;
  throw new CliError(`no pending invitation to "${what}": ${pending} (\`trellis orgs invitations list\`)`);
}
