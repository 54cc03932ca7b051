import { Command, Option } from 'clipanion';
import { resolveVineyard } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class RenameVineyardCommand extends TrellisCommand {
  static override paths = [['vineyards', 'rename']];

  static override usage = Command.Usage({
    category: 'Vineyards',
    description: 'Rename a vineyard',
    details: 'Its configurations and their jobs stay as they are. In an organization: admins and owners.',
    examples: [['Rename one', '$0 vineyards rename staging preprod']],
  });

  vineyard = Option.String({ name: 'old-name-or-id' });
  name = Option.String({ name: 'new-name' });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const vineyard = await resolveVineyard(client, this.vineyard);
    const renamed = await client.renameVineyard(vineyard.id, this.name);
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson(renamed);
      return 0;
    }
    terminal.success(`Renamed vineyard ${vineyard.name} to ${terminal.err.bold(renamed.name)}`);
    return 0;
  }
}
