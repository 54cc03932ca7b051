import { isUuid } from '@trellis/core';
import { Command, Option, UsageError } from 'clipanion';
import { statusColour, timestamp } from '../../output/format.js';
import { renderFields } from '../../output/table.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class ShowWorkerCommand extends TrellisCommand {
  static override paths = [['workers', 'show']];

  static override usage = Command.Usage({
    category: 'Workers',
    description: 'Show an agent and its deployment metadata',
    examples: [['Show an agent', '$0 workers show 3f1e2d4c-5b6a-4789-9abc-def012345678']],
  });

  id = Option.String({ name: 'id' });

  override async execute(): Promise<number> {
    if (!isUuid(this.id)) throw new UsageError(`a worker id is a UUID, got "${this.id}"`);
    const worker = await this.signedInClient().getWorker(this.id);
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson(worker);
      return 0;
    }
    const { out } = terminal;
    const metadata = Object.entries(worker.metadata ?? {}).map(
      ([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`,
    );
    terminal.print(
      renderFields(
        [
          ['Name', worker.name],
          ['ID', worker.id],
          ['Status', statusColour(out, worker.status)],
          ['Mode', worker.mode],
          ['Version', worker.version],
          ['Last heartbeat', timestamp(worker.last_heartbeat)],
          ['Registered', timestamp(worker.created_at)],
          ['Destroyed', worker.destroyed_at ? timestamp(worker.destroyed_at) : null],
          ['Metadata', metadata.join(', ')],
        ],
        out.bold,
      ),
    );
    return 0;
  }
}
