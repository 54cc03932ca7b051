import { Command, Option } from 'clipanion';
import { resolveOrg } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class CreateVineyardCommand extends TrellisCommand {
  static override paths = [['vineyards', 'create']];

  static override usage = Command.Usage({
    category: 'Vineyards',
    description: 'Create a vineyard',
    details:
      'Names are 1-100 letters, digits, `.`, `_` or `-`, starting with a letter or digit, and unique among the vineyards of their owner. With `--org` the vineyard (and every vine and job in it) belongs to that organization; that needs the admin role. Prints the new vineyard id (the whole vineyard with `--json`).',
    examples: [
      ['Create a vineyard for production', '$0 vineyards create production'],
      ['One of an organization', '$0 vineyards create production --org platform-team'],
    ],
  });

  name = Option.String({ name: 'name' });
  org = Option.String('--org', { description: 'The organization (name or id) that owns the vineyard' });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const org = this.org !== undefined ? await resolveOrg(client, this.org) : null;
    this.orgName = org?.name;
    const vineyard = await client.createVineyard(this.name, org ? { orgId: org.id } : {});
    const terminal = this.terminal;
    if (this.json) terminal.printJson(vineyard);
    else {
      terminal.success(
        `Created vineyard ${terminal.err.bold(vineyard.name)}${org ? ` in organization ${terminal.err.bold(org.name)}` : ''}`,
      );
      terminal.print(vineyard.id);
    }
    return 0;
  }
}
