import { Command, Option } from 'clipanion';
import { resolveOrg } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';
import { membersTable } from './membersTable.js';

export class ListMembersCommand extends TrellisCommand {
  static override paths = [
    ['orgs', 'members', 'list'],
    ['orgs', 'members'],
  ];

  static override usage = Command.Usage({
    category: 'Organizations',
    description: "List an organization's members and their roles",
    details:
      'A pending member is an invitation: they become a member when they accept it (`trellis orgs invitations accept`), now or after their first sign-in with that (verified) email.',
    examples: [['List members', '$0 orgs members list platform-team']],
  });

  org = Option.String({ name: 'org' });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const org = await resolveOrg(client, this.org);
    this.orgName = org.name;
    const members = await client.listMembers(org.id);
    const terminal = this.terminal;
    if (this.json) terminal.printJson(members);
    else terminal.print(membersTable(terminal, members));
    return 0;
  }
}
