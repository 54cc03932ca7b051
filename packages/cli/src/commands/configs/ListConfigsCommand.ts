import { Command, Option } from 'clipanion';
import { describeSource, driftBadge, statusColour, timeAgo } from '../../output/format.js';
import { ownerColumn } from '../../output/owners.js';
import { renderTable } from '../../output/table.js';
import { resolveOwnerFilter } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class ListConfigsCommand extends TrellisCommand {
  static override paths = [['configs', 'list'], ['configs']];

  static override usage = Command.Usage({
    category: 'Configurations',
    description: 'List your vine configurations and those of your organizations',
    details: 'Sensitive variable values are never shown (the server does not return them).',
    examples: [
      ['List configurations', '$0 configs list'],
      ['Only your own', '$0 configs list --org personal'],
      ['The failed ones, for a script', '$0 configs list --json | jq -r \'.[] | select(.status == "FAILED") | .name\''],
    ],
  });

  org = Option.String('--org', {
    description: 'Only those of this organization (name or id), or `personal` for only your own',
  });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const owner = await resolveOwnerFilter(client, this.org);
    const configurations = await client.listConfigurations(owner);
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson(configurations);
      return 0;
    }
    if (configurations.length === 0) {
      terminal.note('No configurations yet; create one with `trellis configs create`.');
      return 0;
    }
    const vineyards = new Map((await client.listVineyards(owner)).map((vineyard) => [vineyard.id, vineyard.name]));
    const { out } = terminal;
    const ownerOf = await ownerColumn(client, configurations, this.org !== undefined);
    terminal.print(
      renderTable(
        [
          'NAME',
          'PROJECT',
          'VINEYARD',
          ...(ownerOf ? ['OWNER'] : []),
          'STATUS',
          'DRIFT',
          'ENGINE',
          'SOURCE',
          'UPDATED',
        ],
        configurations.map((vine) => [
          vine.name,
          vine.project_name,
          vineyards.get(vine.vineyard_id) ?? vine.vineyard_id,
          ...(ownerOf ? [ownerOf(vine)] : []),
          statusColour(out, vine.status),
          driftBadge(out, vine.drift?.status),
          vine.engine.version ? `${vine.engine.name} ${vine.engine.version}` : vine.engine.name,
          describeSource(vine.source),
          timeAgo(vine.updated_at),
        ]),
        out.bold,
      ),
    );
    return 0;
  }
}
