import { isUuid } from '@trellis/core';
import { Command, Option, UsageError } from 'clipanion';
import { timestamp } from '../../output/format.js';
import { renderTable } from '../../output/table.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class ListDeliveriesCommand extends TrellisCommand {
  static override paths = [['notifications', 'deliveries']];

  static override usage = Command.Usage({
    category: 'Notifications',
    description: "A notification's recent deliveries, newest first, with their attempts",
    examples: [['The last 20', '$0 notifications deliveries 3f1e2d4c-5b6a-4789-9abc-def012345678 --limit 20']],
  });

  id = Option.String({ name: 'id' });
  limit = Option.String('--limit', { description: 'How many (default 50)' });

  override async execute(): Promise<number> {
    if (!isUuid(this.id)) throw new UsageError(`a notification id is a UUID, got "${this.id}"`);
    const limit = this.limit === undefined ? undefined : Number(this.limit);
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
      throw new UsageError('--limit is a positive whole number');
    }
    const page = await this.signedInClient().listDeliveriesPage(this.id, limit === undefined ? {} : { limit });
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson(page.items);
      return 0;
    }
    if (page.items.length === 0) {
      terminal.note('No deliveries yet.');
      return 0;
    }
    terminal.print(
      renderTable(
        ['EVENT', 'STATUS', 'ATTEMPTS', 'LAST ANSWER', 'CREATED', 'ID'],
        page.items.map((d) => {
          const last = d.attempts[d.attempts.length - 1];
          const answer = last ? (last.status_code !== null ? `HTTP ${last.status_code}` : (last.error ?? '')) : '-';
          return [d.event, d.status, String(d.attempts.length), answer, timestamp(d.created_at), d.id];
        }),
        terminal.out.bold,
      ),
    );
    return 0;
  }
}
