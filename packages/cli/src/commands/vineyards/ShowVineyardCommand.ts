import { Command, Option } from 'clipanion';
import { describeSource, statusColour, timeAgo, timestamp } from '../../output/format.js';
import { renderFields, renderTable } from '../../output/table.js';
import { resolveVineyard } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class ShowVineyardCommand extends TrellisCommand {
  static override paths = [['vineyards', 'show']];

  static override usage = Command.Usage({
    category: 'Vineyards',
    description: 'Show a vineyard and its vines',
    examples: [
      ['By id', '$0 vineyards show 0b5c3a4e-8a38-4a5e-9d0e-6f1c2d3e4f50'],
      ['By name', '$0 vineyards show production'],
    ],
  });

  vineyard = Option.String({ name: 'id-or-name' });

  override async execute(): Promise<number> {
    const vineyard = await resolveVineyard(this.signedInClient(), this.vineyard);
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson(vineyard);
      return 0;
    }
    const { out } = terminal;
    terminal.print(
      renderFields(
        [
          ['Name', vineyard.name],
          ['ID', vineyard.id],
          ['Created', timestamp(vineyard.created_at)],
          ['Vines', String(vineyard.vines.length)],
        ],
        out.bold,
      ),
    );
    if (vineyard.vines.length > 0) {
      terminal.print();
      terminal.print(
        renderTable(
          ['NAME', 'PROJECT', 'STATUS', 'SOURCE', 'UPDATED', 'ID'],
          vineyard.vines.map((vine) => [
            vine.name,
            vine.project_name,
            statusColour(out, vine.status),
            describeSource(vine.source),
            timeAgo(vine.updated_at),
            vine.id,
          ]),
          out.bold,
        ),
      );
    }
    return 0;
  }
}
