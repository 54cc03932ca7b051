import { Command, Option } from 'clipanion';
import { timeAgo } from '../../output/format.js';
import { ownerColumn } from '../../output/owners.js';
import { renderTable } from '../../output/table.js';
import { resolveOwnerFilter } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class ListVineyardsCommand extends TrellisCommand {
  static override paths = [['vineyards', 'list'], ['vineyards']];

  static override usage = Command.Usage({
    category: 'Vineyards',
    description: 'List your vineyards and those of your organizations',
    details: 'A vineyard groups vines (deployment configurations). `--json` prints the vineyards with their vines.',
    examples: [
      ['List vineyards', '$0 vineyards list'],
      ['Those of one organization', '$0 vineyards list --org platform-team'],
      ['Names only', "$0 vineyards list --json | jq -r '.[].name'"],
    ],
  });

  org = Option.String('--org', {
    description: 'Only those of this organization (name or id), or `personal` for only your own',
  });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const vineyards = await client.listVineyards(await resolveOwnerFilter(client, this.org));
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson(vineyards);
      return 0;
    }
    if (vineyards.length === 0) {
      terminal.note('No vineyards yet; create one with `trellis vineyards create NAME`.');
      return 0;
    }
    const owner = await ownerColumn(client, vineyards, this.org !== undefined);
    terminal.print(
      renderTable(
        ['NAME', ...(owner ? ['OWNER'] : []), 'VINES', 'CREATED', 'ID'],
        vineyards.map((vineyard) => [
          vineyard.name,
          ...(owner ? [owner(vineyard)] : []),
          String(vineyard.vines.length),
          timeAgo(vineyard.created_at),
          vineyard.id,
        ]),
        terminal.out.bold,
      ),
    );
    return 0;
  }
}
