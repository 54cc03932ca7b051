import { Command, Option } from 'clipanion';
import { timestamp } from '../../output/format.js';
import { renderFields } from '../../output/table.js';
import { resolveOrg } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';
import { membersTable } from './membersTable.js';

export class ShowOrgCommand extends TrellisCommand {
  static override paths = [['orgs', 'show']];

  static override usage = Command.Usage({
    category: 'Organizations',
    description: 'Show an organization, your role in it and its members',
    details: 'With `--json`: the organization with a `members` array.',
    examples: [
      ['By name', '$0 orgs show platform-team'],
      ['By id', '$0 orgs show 6f0e8d2c-1b3a-4c5d-8e9f-0a1b2c3d4e5f'],
    ],
  });

  org = Option.String({ name: 'org' });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const org = await resolveOrg(client, this.org);
    this.orgName = org.name;
    const members = await client.listMembers(org.id);
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson({ ...org, members });
      return 0;
    }
    terminal.print(
      renderFields(
        [
          ['Name', org.name],
          ['ID', org.id],
          ['Your role', org.role],
          ['Created', timestamp(org.created_at)],
          ['Members', String(members.length)],
        ],
        terminal.out.bold,
      ),
    );
    terminal.print();
    terminal.print(membersTable(terminal, members));
    return 0;
  }
}
