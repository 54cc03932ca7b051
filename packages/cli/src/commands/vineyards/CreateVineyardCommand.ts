import { Command, Option } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';

export class CreateVineyardCommand extends TrellisCommand {
  static override paths = [['vineyards', 'create']];

  static override usage = Command.Usage({
    category: 'Vineyards',
    description: 'Create a vineyard',
    details:
      'Names are 1-100 letters, digits, `.`, `_` or `-`, starting with a letter or digit, and unique among your vineyards. Prints the new vineyard id (the whole vineyard with `--json`).',
    examples: [['Create a vineyard for production', '$0 vineyards create production']],
  });

  name = Option.String({ name: 'name' });

  override async execute(): Promise<number> {
    const vineyard = await this.signedInClient().createVineyard(this.name);
    const terminal = this.terminal;
    if (this.json) terminal.printJson(vineyard);
    else {
      terminal.success(`Created vineyard ${terminal.err.bold(vineyard.name)}`);
      terminal.print(vineyard.id);
    }
    return 0;
  }
}
