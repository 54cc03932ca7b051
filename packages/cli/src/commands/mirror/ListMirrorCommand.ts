import { Command } from 'clipanion';
import { formatBytes, timestamp } from '../../output/format.js';
import { renderTable } from '../../output/table.js';
import { namespaceOf, namespaceOption } from '../modules/moduleOptions.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class ListMirrorCommand extends TrellisCommand {
  static override paths = [['mirror', 'list'], ['mirror']];

  static override usage = Command.Usage({
    category: 'Registry',
    description: "List the archives of a namespace's provider mirror",
    examples: [['The mirror of the organization acme', '$0 mirror list --namespace acme']],
  });

  namespace = namespaceOption();

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const namespace = await namespaceOf(client, this.namespace);
    const archives = await client.listMirrorArchives(namespace);
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson(archives);
      return 0;
    }
    if (archives.length === 0) {
      terminal.note(
        `The mirror of ${this.namespace} is empty; fill it with \`trellis mirror push DIR --namespace ${this.namespace}\`.`,
      );
      return 0;
    }
    terminal.print(
      renderTable(
        ['PROVIDER', 'VERSION', 'PLATFORM', 'SIZE', 'ORIGIN', 'ADDED', 'ID'],
        archives.map((a) => [
          a.provider,
          a.version,
          a.platform,
          formatBytes(a.size),
          a.origin,
          timestamp(a.created_at),
          a.id,
        ]),
        terminal.out.bold,
      ),
    );
    return 0;
  }
}
