import { Command } from 'clipanion';
import { timeAgo } from '../../output/format.js';
import { renderTable } from '../../output/table.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class ListOrgsCommand extends TrellisCommand {
  static override paths = [['orgs', 'list'], ['orgs']];

  static override usage = Command.Usage({
    category: 'Organizations',
    description: 'List the organizations you belong to, with your role in each',
    examples: [
      ['List organizations', '$0 orgs list'],
      [
        'Names of those you administer',
        '$0 orgs list --json | jq -r \'.[] | select(.role == "admin" or .role == "owner") | .name\'',
      ],
    ],
  });

  override async execute(): Promise<number> {
    const orgs = await this.signedInClient().listOrgs();
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson(orgs);
      return 0;
    }
    if (orgs.length === 0) {
      terminal.note('You belong to no organization; create one with `trellis orgs create NAME`.');
      return 0;
    }
    terminal.print(
      renderTable(
        ['NAME', 'ROLE', 'CREATED', 'ID'],
        orgs.map((org) => [org.name, org.role, timeAgo(org.created_at), org.id]),
        terminal.out.bold,
      ),
    );
    return 0;
  }
}
