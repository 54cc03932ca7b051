import { Command, Option } from 'clipanion';
import { statusColour, timeAgo } from '../../output/format.js';
import { ownerColumn } from '../../output/owners.js';
import { renderTable } from '../../output/table.js';
import { resolveOwnerFilter } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class ListWorkersCommand extends TrellisCommand {
  static override paths = [['workers', 'list'], ['workers']];

  static override usage = Command.Usage({
    category: 'Workers',
    description: 'List your agents (workers) and those of your organizations',
    details:
      'An agent is OFFLINE when it has not sent a heartbeat for 60 seconds, BUSY while it runs a job, else ONLINE.',
    examples: [
      ['List agents', '$0 workers list'],
      ["An organization's pool", '$0 workers list --org platform-team'],
    ],
  });

  org = Option.String('--org', {
    description: 'Only those of this organization (name or id), or `personal` for only your own',
  });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const workers = await client.listWorkers(await resolveOwnerFilter(client, this.org));
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson(workers);
      return 0;
    }
    if (workers.length === 0) {
      terminal.note('No agents yet; register one with `trellis workers register --name NAME`.');
      return 0;
    }
    const { out } = terminal;
    const owner = await ownerColumn(client, workers, this.org !== undefined);
    terminal.print(
      renderTable(
        ['NAME', ...(owner ? ['OWNER'] : []), 'STATUS', 'MODE', 'VERSION', 'LAST HEARTBEAT', 'ID'],
        workers.map((worker) => [
          worker.name,
          ...(owner ? [owner(worker)] : []),
          statusColour(out, worker.status),
          worker.mode,
          worker.version ?? '-',
          timeAgo(worker.last_heartbeat),
          worker.id,
        ]),
        out.bold,
      ),
    );
    return 0;
  }
}
