import { Command, Option } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';

export class CreateOrgCommand extends TrellisCommand {
  static override paths = [['orgs', 'create']];

  static override usage = Command.Usage({
    category: 'Organizations',
    description: 'Create an organization, with you as its owner',
    details:
      'Organization names are unique on the server. Prints the new organization id (the whole organization with `--json`). Add people with `trellis orgs members add`.',
    examples: [['Create an organization', '$0 orgs create platform-team']],
  });

  name = Option.String({ name: 'name' });

  override async execute(): Promise<number> {
    const org = await this.signedInClient().createOrg(this.name);
    const terminal = this.terminal;
    if (this.json) terminal.printJson(org);
    else {
      terminal.success(`Created organization ${terminal.err.bold(org.name)}; you are its owner`);
      terminal.print(org.id);
    }
    return 0;
  }
}
