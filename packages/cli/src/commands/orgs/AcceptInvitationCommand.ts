import { Command, Option } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';
import { findInvitation } from './invitations.js';

export class AcceptInvitationCommand extends TrellisCommand {
  static override paths = [['orgs', 'invitations', 'accept']];

  static override usage = Command.Usage({
    category: 'Organizations',
    description: 'Accept an invitation: join the organization with the role it offers',
    details:
      'Names the invitation by the organization it is to, or by its id (`trellis orgs invitations list`). With `--json`: the organization joined, with your role.',
    examples: [
      ['Join platform-team', '$0 orgs invitations accept platform-team'],
      ['By id', '$0 orgs invitations accept 6f1c…'],
    ],
  });

  invitation = Option.String({ name: 'org-or-id' });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const invitation = await findInvitation(client, this.invitation);
    this.orgName = invitation.org_name;
    const org = await client.acceptInvitation(invitation.id);
    const terminal = this.terminal;
    if (this.json) terminal.printJson(org);
    else terminal.success(`You joined ${terminal.err.bold(org.name)} as ${org.role}`);
    return 0;
  }
}
