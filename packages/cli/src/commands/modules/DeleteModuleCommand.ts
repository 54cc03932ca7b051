import { Command, Option } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';
import { moduleLabel, nameOption, namespaceOf, namespaceOption, systemOption } from './moduleOptions.js';

export class DeleteModuleCommand extends TrellisCommand {
  static override paths = [['modules', 'delete']];

  static override usage = Command.Usage({
    category: 'Registry',
    description: 'Delete a module version, or with no --version the whole module',
    details: 'Configurations that need a deleted version can no longer `init`. Needs the admin role in the namespace.',
    examples: [
      ['One version', '$0 modules delete --namespace acme --name vpc --system aws --version 1.2.0'],
      ['The module and every version', '$0 modules delete --namespace acme --name vpc --system aws'],
    ],
  });

  namespace = namespaceOption();
  name = nameOption();
  system = systemOption();
  version = Option.String('--version', { description: 'The version to delete (absent: every version)' });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const address = {
      namespace: await namespaceOf(client, this.namespace),
      name: this.name,
      system: this.system,
    };
    await client.deleteModule(this.version === undefined ? address : { ...address, version: this.version });
    const what = `${moduleLabel(address)}${this.version === undefined ? '' : ` ${this.version}`}`;
    if (this.json) {
      this.terminal.printJson({ module: moduleLabel(address), version: this.version ?? null, deleted: true });
      return 0;
    }
    this.terminal.success(`Deleted ${what}`);
    return 0;
  }
}
