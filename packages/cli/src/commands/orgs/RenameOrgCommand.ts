import { Command, Option } from 'clipanion';
import { resolveOrg } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class RenameOrgCommand extends TrellisCommand {
  static override paths = [['orgs', 'rename']];

  static override usage = Command.Usage({
    category: 'Organizations',
    description: 'Rename an organization (admins)',
    details:
      'Names are unique on the server. Its records, members and tokens stay; `--org` then takes the new name (or the id, which never changes). With `--json`: the organization.',
    examples: [['Rename', '$0 orgs rename platform-team platform']],
  });

  org = Option.String({ name: 'org' });
  name = Option.String({ name: 'new-name' });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const org = await resolveOrg(client, this.org);
    this.orgName = org.name;
    const renamed = await client.renameOrg(org.id, this.name);
    const terminal = this.terminal;
    if (this.json) terminal.printJson(renamed);
    else terminal.success(`Renamed ${terminal.err.bold(org.name)} to ${terminal.err.bold(renamed.name)}`);
    return 0;
  }
}
