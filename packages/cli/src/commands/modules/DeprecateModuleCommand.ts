import { Command, Option } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';
import { moduleLabel, nameOption, namespaceOf, namespaceOption, systemOption } from './moduleOptions.js';

export class DeprecateModuleCommand extends TrellisCommand {
  static override paths = [['modules', 'deprecate']];

  static override usage = Command.Usage({
    category: 'Registry',
    description: 'Deprecate a module version (it stays installable), or undo it with --undo',
    details: 'Needs the admin role in the namespace.',
    examples: [
      [
        'Deprecate 1.2.0',
        '$0 modules deprecate --namespace acme --name vpc --system aws --version 1.2.0 --reason "use 1.3"',
      ],
    ],
  });

  namespace = namespaceOption();
  name = nameOption();
  system = systemOption();
  version = Option.String('--version', { required: true, description: 'The version to deprecate' });
  reason = Option.String('--reason', { description: 'Why, and what to use instead' });
  undo = Option.Boolean('--undo', false, { description: 'Undo the deprecation' });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const address = {
      namespace: await namespaceOf(client, this.namespace),
      name: this.name,
      system: this.system,
      version: this.version,
    };
    const version = await client.deprecateModuleVersion(address, {
      deprecated: !this.undo,
      ...(this.reason === undefined ? {} : { reason: this.reason }),
    });
    if (this.json) {
      this.terminal.printJson(version);
      return 0;
    }
    this.terminal.success(`${this.undo ? 'Undeprecated' : 'Deprecated'} ${moduleLabel(version)} ${version.version}`);
    return 0;
  }
}
