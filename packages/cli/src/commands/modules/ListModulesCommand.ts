import { Command, Option } from 'clipanion';
import { timestamp } from '../../output/format.js';
import { renderTable } from '../../output/table.js';
import { TrellisCommand } from '../TrellisCommand.js';
import { namespaceOf } from './moduleOptions.js';

export class ListModulesCommand extends TrellisCommand {
  static override paths = [['modules', 'list'], ['modules']];

  static override usage = Command.Usage({
    category: 'Registry',
    description: "List a namespace's modules in the private registry",
    examples: [
      ['Your own', '$0 modules list'],
      ["An organization's", '$0 modules list --namespace acme'],
    ],
  });

  namespace = Option.String('--namespace', {
    description: 'An organization you belong to (by name); default: your personal namespace',
  });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const namespace = await namespaceOf(client, this.namespace);
    const modules = [];
    let cursor: string | undefined;
    do {
      const page = await client.listModulesPage(namespace, cursor === undefined ? {} : { cursor });
      modules.push(...page.items);
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
    if (this.json) {
      this.terminal.printJson(modules);
      return 0;
    }
    if (modules.length === 0) {
      this.terminal.note(`No modules in ${namespace}; publish one with \`trellis modules publish\`.`);
      return 0;
    }
    this.terminal.print(
      renderTable(
        ['MODULE', 'LATEST', 'UPDATED'],
        modules.map((module) => [
          `${module.namespace}/${module.name}/${module.system}`,
          module.latest_version ?? '-',
          timestamp(module.updated_at),
        ]),
        this.terminal.out.bold,
      ),
    );
    return 0;
  }
}
