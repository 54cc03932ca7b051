import { Command, Option } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';

export class DeleteProviderVersionCommand extends TrellisCommand {
  static override paths = [['providers', 'delete']];

  static override usage = Command.Usage({
    category: 'Registry',
    description: 'Delete a provider version and its zips (admins)',
    details: 'Configurations that pinned it no longer install it. Audited.',
    examples: [['Delete acme/null 1.0.0', '$0 providers delete --namespace acme --type null --version 1.0.0']],
  });

  namespace = Option.String('--namespace', { required: true, description: 'The organization name' });
  type = Option.String('--type', { required: true, description: 'The provider type' });
  version = Option.String('--version', { required: true, description: 'The version to delete' });

  override async execute(): Promise<number> {
    await this.signedInClient().deleteProviderVersion(this.namespace, this.type, this.version);
    if (this.json) {
      this.terminal.printJson({ namespace: this.namespace, type: this.type, version: this.version, deleted: true });
      return 0;
    }
    this.terminal.success(`Deleted ${this.namespace}/${this.type} ${this.version}`);
    return 0;
  }
}
