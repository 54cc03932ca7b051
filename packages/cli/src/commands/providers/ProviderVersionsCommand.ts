import { Command, Option } from 'clipanion';
import { timestamp } from '../../output/format.js';
import { renderTable } from '../../output/table.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class ProviderVersionsCommand extends TrellisCommand {
  static override paths = [['providers', 'versions']];

  static override usage = Command.Usage({
    category: 'Registry',
    description: "List a provider's versions, with their platforms and signing key",
    details: 'A platform marked `(pending)` is listed in SHA256SUMS but its zip is not uploaded yet.',
    examples: [['The versions of acme/null', '$0 providers versions --namespace acme --type null']],
  });

  namespace = Option.String('--namespace', { required: true, description: 'The organization name' });
  type = Option.String('--type', { required: true, description: 'The provider type' });

  override async execute(): Promise<number> {
    const versions = await this.signedInClient().providerVersions(this.namespace, this.type);
    if (this.json) {
      this.terminal.printJson(versions);
      return 0;
    }
    if (versions.length === 0) {
      this.terminal.note(`${this.namespace}/${this.type} has no versions.`);
      return 0;
    }
    this.terminal.print(
      renderTable(
        ['VERSION', 'PROTOCOLS', 'PLATFORMS', 'KEY', 'PUBLISHED'],
        versions.map((version) => [
          version.version,
          version.protocols.join(','),
          version.platforms
            .map((platform) => `${platform.os}_${platform.arch}${platform.uploaded ? '' : ' (pending)'}`)
            .join(' '),
          version.key_id,
          timestamp(version.created_at),
        ]),
        this.terminal.out.bold,
      ),
    );
    return 0;
  }
}
