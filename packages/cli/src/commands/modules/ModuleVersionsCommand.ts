import { Command } from 'clipanion';
import { timestamp } from '../../output/format.js';
import { renderTable } from '../../output/table.js';
import { TrellisCommand } from '../TrellisCommand.js';
import { nameOption, namespaceOf, namespaceOption, systemOption } from './moduleOptions.js';

export class ModuleVersionsCommand extends TrellisCommand {
  static override paths = [['modules', 'versions']];

  static override usage = Command.Usage({
    category: 'Registry',
    description: "List a module's versions, highest first",
    examples: [['acme/vpc/aws', '$0 modules versions --namespace acme --name vpc --system aws']],
  });

  namespace = namespaceOption();
  name = nameOption();
  system = systemOption();

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const { versions } = await client.moduleVersions({
      namespace: await namespaceOf(client, this.namespace),
      name: this.name,
      system: this.system,
    });
    if (this.json) {
      this.terminal.printJson(versions);
      return 0;
    }
    this.terminal.print(
      renderTable(
        ['VERSION', 'PUBLISHED', 'SIZE', 'DEPRECATED'],
        versions.map((version) => [
          version.version,
          timestamp(version.published_at),
          String(version.size),
          version.deprecated ? `yes${version.deprecation_reason ? `: ${version.deprecation_reason}` : ''}` : '',
        ]),
        this.terminal.out.bold,
      ),
    );
    return 0;
  }
}
