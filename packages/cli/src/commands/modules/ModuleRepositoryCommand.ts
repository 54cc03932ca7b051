import { Command, Option } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';
import { describeConnection } from './ConnectModuleCommand.js';
import { moduleLabel, nameOption, namespaceOf, namespaceOption, systemOption } from './moduleOptions.js';

export class ModuleRepositoryCommand extends TrellisCommand {
  static override paths = [['modules', 'repository']];

  static override usage = Command.Usage({
    category: 'Registry',
    description: "Show a module's git repository and what its last tag push did, or disconnect it",
    examples: [
      ['What did the last tag do?', '$0 modules repository --namespace acme --name vpc --system aws'],
      ['Stop publishing from tags (versions stay)', '$0 modules repository --name vpc --system aws --disconnect'],
    ],
  });

  disconnect = Option.Boolean('--disconnect', false, {
    description: 'Disconnect the repository and delete its webhook',
  });
  namespace = namespaceOption();
  name = nameOption();
  system = systemOption();

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const address = { namespace: await namespaceOf(client, this.namespace), name: this.name, system: this.system };
    if (this.disconnect) {
      await client.disconnectModuleRepository(address);
      if (this.json) this.terminal.printJson({ disconnected: true, ...address });
      else this.terminal.print(`${moduleLabel(address)} no longer publishes from git tags.`);
      return 0;
    }
    const connection = await client.moduleRepository(address);
    if (this.json) this.terminal.printJson(connection);
    else this.terminal.print(describeConnection(connection));
    return 0;
  }
}
