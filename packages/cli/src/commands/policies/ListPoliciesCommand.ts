import { Command, Option } from 'clipanion';
import { timestamp } from '../../output/format.js';
import { renderTable } from '../../output/table.js';
import { resolveOwnerFilter } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';
import { vineyardNames } from '../../output/vineyards.js';

export class ListPoliciesCommand extends TrellisCommand {
  static override paths = [['policies', 'list'], ['policies']];

  static override usage = Command.Usage({
    category: 'Policies',
    description: "List your policies and your organizations'",
    examples: [
      ['Everything you see', '$0 policies list'],
      ["One organization's", '$0 policies list --org acme'],
    ],
  });

  org = Option.String('--org', { description: 'An organization (name or id), or `personal`' });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const policies = await client.listPolicies(await resolveOwnerFilter(client, this.org));
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson(policies);
      return 0;
    }
    if (policies.length === 0) {
      terminal.note('No policies; create one with `trellis policies create`.');
      return 0;
    }
    const vineyards = await vineyardNames(
      client,
      policies.map((p) => p.vineyard_id),
    );
    terminal.print(
      renderTable(
        ['NAME', 'ENFORCEMENT', 'VERSION', 'VINEYARD', 'UPDATED', 'ID'],
        policies.map((p) => [
          p.name,
          p.enforcement,
          String(p.version),
          p.vineyard_id ? (vineyards.get(p.vineyard_id) ?? p.vineyard_id) : 'all',
          timestamp(p.updated_at),
          p.id,
        ]),
        terminal.out.bold,
      ),
    );
    return 0;
  }
}
