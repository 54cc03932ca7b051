import { Command } from 'clipanion';
import { timeAgo } from '../../output/format.js';
import { renderTable } from '../../output/table.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class ListInvitationsCommand extends TrellisCommand {
  static override paths = [
    ['orgs', 'invitations', 'list'],
    ['orgs', 'invitations'],
  ];

  static override usage = Command.Usage({
    category: 'Organizations',
    description: 'List your pending invitations to organizations',
    details: `
      Being added to an organization is an invitation: you become a member only when you accept it (\`trellis orgs invitations accept ORG\`), and until then you see nothing of the organization. Invitations are sent to an email: the one you signed in with. An organization API token cannot read or answer invitations.
    `,
    examples: [
      ['List invitations', '$0 orgs invitations'],
      ['Their ids', "$0 orgs invitations list --json | jq -r '.[].id'"],
    ],
  });

  override async execute(): Promise<number> {
    const invitations = await this.signedInClient().listInvitations();
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson(invitations);
      return 0;
    }
    if (invitations.length === 0) {
      terminal.note('You have no pending invitation.');
      return 0;
    }
    terminal.print(
      renderTable(
        ['ORGANIZATION', 'ROLE', 'INVITED BY', 'SENT', 'ID'],
        invitations.map((invitation) => [
          invitation.org_name,
          invitation.role,
          invitation.invited_by ?? '-',
          timeAgo(invitation.created_at),
          invitation.id,
        ]),
        terminal.out.bold,
      ),
    );
    return 0;
  }
}
