import { Command, Option } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';

export class DisconnectConfigCommand extends TrellisCommand {
  static override paths = [['configs', 'disconnect']];

  static override usage = Command.Usage({
    category: 'Configurations',
    description: 'Disconnect a configuration from its repository',
    details:
      'Pushes and pull requests no longer plan it; the webhook Trellis created is deleted (if the provider refuses, delete it there yourself). The configuration keeps its git source.',
    examples: [['Disconnect', '$0 configs disconnect web']],
  });

  config = Option.String({ name: 'name-or-id', required: true });

  override async execute(): Promise<number> {
    await this.signedInClient().disconnectRepository(this.config);
    if (this.json) this.terminal.printJson({ configuration: this.config, disconnected: true });
    else this.terminal.print(`Disconnected ${this.config} from its repository.`);
    return 0;
  }
}
