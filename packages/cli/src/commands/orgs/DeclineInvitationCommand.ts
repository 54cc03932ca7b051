import { Command, Option } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';
import { findInvitation } from './invitations.js';

export class DeclineInvitationCommand extends TrellisCommand {
  static override paths = [['orgs', 'invitations', 'decline']];

  static override usage = Command.Usage({
    category: 'Organizations',
    description: 'Decline an invitation: it is removed, and the organization’s audit log says so',
    details:
      'Names the invitation by the organization it is to, or by its id (`trellis orgs invitations list`). With `--json`: the invitation as it was.',
    examples: [['Decline', '$0 orgs invitations decline some-org']],
  });

  invitation = Option.String({ name: 'org-or-id' });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const invitation = await findInvitation(client, this.invitation);
    this.orgName = invitation.org_name;
    await client.declineInvitation(invitation.id);
    const terminal = this.terminal;
    if (this.json) terminal.printJson(invitation);
    else terminal.success(`You declined the invitation to ${terminal.err.bold(invitation.org_name)}`);
    return 0;
  }
}
